"""Specialization to the compiled inputs: metadata checks fold, data checks stay (lowering/specialize.py)."""

import pytest
import torch

import torch_trt
from torch_trt.lowering import specialize as specialize_module


class _Attention(torch.nn.Module):
    """A pre-norm attention block, as torchvision's ViT writes it: scripted, MHA keeps its fast-path checks."""

    def __init__(self, need_weights):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.attention = torch.nn.MultiheadAttention(32, 4, batch_first=True)
        self.need_weights = need_weights

    def forward(self, x):
        y = self.norm(x)
        y, _ = self.attention(y, y, y, need_weights=self.need_weights)
        return x + y


class _RankAndDtype(torch.nn.Module):
    def forward(self, x):
        if x.dim() == 3 and x.dtype == torch.float32 and not x.requires_grad:
            return torch.relu(x) * 2 + 1
        return x - 1


class _DataCheck(torch.nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return torch.relu(x) * 2 + 1
        return torch.relu(x) * 3 - 1


def _explain_and_compile(module, inputs, **settings):
    scripted = torch.jit.script(module.eval())
    report = torch_trt.explain(scripted, inputs, target="reference", **settings)
    compiled = torch_trt.compile(torch.jit.script(module.eval()), inputs=inputs, target="reference", **settings)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), module(*inputs), rtol=1e-4, atol=1e-5)
    return report


@pytest.mark.parametrize("need_weights", [False, True], ids=["fast_path", "weights"])
def test_scripted_multihead_attention_is_one_engine(need_weights):
    report = _explain_and_compile(_Attention(need_weights), [torch.randn(2, 10, 32)])
    assert report.engine_count == 1 and not report.fallbacks, report


class _Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True)

    def forward(self, x):
        return self.layer(x)


def test_scripted_transformer_encoder_layer_is_one_engine():
    report = _explain_and_compile(_Encoder(), [torch.randn(2, 10, 32)])
    assert report.engine_count == 1 and not report.fallbacks, report


def test_rank_dtype_and_requires_grad_checks_fold_to_the_branch_taken():
    report = _explain_and_compile(_RankAndDtype(), [torch.randn(2, 3, 4)], min_block_size=1)
    assert report.engine_count == 1 and not report.fallbacks, report


def test_a_check_on_tensor_data_stays_control_flow():
    module = _DataCheck()
    report = torch_trt.explain(torch.jit.script(module.eval()), [torch.ones(2, 3)], target="reference",
                               min_block_size=1)
    assert any(description.startswith("prim::If") for description, _ in report.fallbacks), report
    compiled = torch_trt.compile(torch.jit.script(module.eval()), inputs=[torch.ones(2, 3)], target="reference",
                                 min_block_size=1)
    negative = -torch.ones(2, 3)  # the branch the example did not take
    torch.testing.assert_close(compiled(negative), module(negative))


class _SizeCheck(torch.nn.Module):
    def forward(self, x):
        if x.size(1) >= 8:
            return torch.relu(x) * 2 + 1
        return torch.relu(x) * 3 - 1


def test_a_size_check_folds_when_every_input_shape_is_static():
    report = _explain_and_compile(_SizeCheck(), [torch.randn(2, 8)], min_block_size=1)
    assert report.engine_count == 1 and not report.fallbacks, report


def test_a_size_check_on_a_dynamic_dim_stays_control_flow():
    spec = torch_trt.Input(min_shape=(2, 4), opt_shape=(2, 8), max_shape=(2, 16))
    module = _SizeCheck().eval()
    compiled = torch_trt.compile(torch.jit.script(module), inputs=[spec], target="reference", min_block_size=1)
    for width in (4, 12):  # both branches
        x = torch.randn(2, width)
        torch.testing.assert_close(compiled(x), module(x))


class _PatchesByATracedSize(torch.nn.Module):
    """transformers' torch_int while tracing (MobileViT's unfolding): arithmetic on a size as a 0-d tensor, read back
    by aten::Int for a reshape."""

    def forward(self, x):
        x = torch.relu(x * 2 + 1)
        batch, width = x.shape  # 0-d tensors while tracing
        patches = (torch.ceil(width / 4) * 4).to(torch.int64) // 4 if torch.jit.is_tracing() else -(-width // 4)
        return torch.relu(x.reshape(batch, patches, 4) * 3)


def test_a_number_read_back_from_a_traced_size_folds_when_every_input_shape_is_static():
    """The aten::Int ran in PyTorch as a read of tensor data: two engines around it."""
    module, x = _PatchesByATracedSize().eval(), torch.randn(2, 8)
    trace = lambda: torch.jit.trace(module, [x], check_trace=False)  # noqa: E731  (each compile freezes its own)
    report = torch_trt.explain(trace(), [x], target="reference", min_block_size=1)
    assert report.engine_count == 1 and not report.fallbacks, report
    compiled = torch_trt.compile(trace(), inputs=[x], target="reference", min_block_size=1)
    torch.testing.assert_close(compiled(x), module(x))


class _SizedChain(torch.nn.Module):
    """Forty reshapes to the tensor's own sizes: eighty size queries, none of which decides a branch."""

    def forward(self, x):
        for _ in range(40):
            x = x.reshape(x.size(0), x.size(1)) + 1
        return x


def test_the_size_queries_of_a_long_graph_are_settled_in_one_walk(monkeypatch):
    """Each query's walk downstream stops at values an earlier walk settled, so a graph with a query per layer costs
    one walk, not one per query (a ViT-B/16 took 2 s here with a walk per query)."""
    graph = torch.jit.script(_SizedChain()).graph
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_loop_unrolling(graph)
    node_count = len(list(graph.nodes()))
    steps = []
    receivers = specialize_module._receivers
    monkeypatch.setattr(specialize_module, "_receivers", lambda use: steps.append(use) or receivers(use))
    assert not specialize_module.specialize(graph, lambda: {}, "cpu", static_shapes=True)
    assert len(graph.findAllNodes("aten::size")) == 80
    assert len(steps) < 3 * node_count


class EditsItsSizes(torch.nn.Module):
    def forward(self, x):
        s = x.size()
        s[0] = -1
        s.append(1)
        for i in range(len(s) - 1):
            s[i] = s[i] + 1
        return x.reshape(x.size(0), -1, 1) * 2, s


def test_a_list_of_static_sizes_written_in_place_is_a_new_list_on_every_call():
    """Folded to one constant list, the writes were dropped (or applied to the constant on every call)."""
    module = torch.jit.script(EditsItsSizes().eval())
    compiled = torch_trt.compile(module, inputs=[torch_trt.Input((4, 3))], target="reference", min_block_size=1,
                                 device="cpu")
    x = torch.randn(4, 3)
    for _ in range(3):
        (y, sizes), (expected_y, expected_sizes) = compiled(x), module(x)
        torch.testing.assert_close(y, expected_y)
        assert sizes == expected_sizes == [0, 4, 1]
