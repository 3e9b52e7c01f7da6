"""Models whose lowering used to crash or give wrong results, compiled end to end on the reference target."""

import pytest
import torch
from torch import nn

import torch_trt
from torch_trt.lowering import lower
from torch_trt.lowering.frozen_attributes import fold_frozen_attributes

REFERENCE = {"target": "reference", "min_block_size": 1}


def _engines(module):
    return str(module.graph).count("torch_trt::execute_engine")


def _assert_matches(module, inputs, **options):
    """Compile `module` with `inputs`; the result matches eager within 1e-4 relative and runs at least one engine."""
    with torch.no_grad():
        expected = module(*[i.clone() for i in inputs])
        compiled = torch_trt.compile(module, inputs=[i.clone() for i in inputs], **REFERENCE, **options)
        actual = compiled(*[i.clone() for i in inputs])
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)
    assert _engines(compiled) >= 1, compiled.graph
    return compiled


class ScaleThenMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))

    def forward(self, x):
        x.mul_(2)
        return self.mlp(x)


def test_matmul_stays_after_an_in_place_write_to_the_input():
    torch.manual_seed(0)
    _assert_matches(torch.jit.script(ScaleThenMlp().eval()), [torch.randn(2, 8)])


def test_consecutive_linears_without_bias():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8, bias=False), nn.Linear(8, 8, bias=False)).eval()
    _assert_matches(model, [torch.randn(2, 8)])


class ChannelShuffle(nn.Module):
    """ShuffleNet's channel shuffle: a view of a transposed tensor made contiguous first."""

    def forward(self, x):
        b, c, h, w = x.shape
        x = x.view(b, 2, c // 2, h, w).transpose(1, 2).contiguous().view(b, c, h, w)
        return torch.relu(x) + 1


@pytest.mark.parametrize("front", ["script", "trace"])
def test_view_after_contiguous(front):
    x = torch.randn(2, 4, 3, 3)
    model = torch.jit.script(ChannelShuffle()) if front == "script" else torch.jit.trace(ChannelShuffle(), (x,))
    _assert_matches(model, [x])


class SelfAttention(nn.Module):
    def __init__(self, need_weights, masked):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 2, batch_first=True)
        self.need_weights, self.masked = need_weights, masked

    def forward(self, q, padding):
        mask = padding if self.masked else None
        out, weights = self.attention(q, q, q, key_padding_mask=mask, need_weights=self.need_weights)
        return out + weights.sum() if self.need_weights else out


def _padding():
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[0, 3:] = True
    return padding


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masked", [True, False])
def test_traced_multihead_attention_fast_path(need_weights, masked):
    torch.manual_seed(0)
    inputs = [torch.randn(2, 5, 16), _padding()]
    with torch.no_grad():  # eval + no_grad: the fused _native_multi_head_attention kernel
        traced = torch.jit.trace(SelfAttention(need_weights, masked).eval(), tuple(inputs))
    assert "_native_multi_head_attention" in str(traced.inlined_graph)
    assert "_native_multi_head_attention" not in str(_assert_matches(traced, inputs).graph)


class EncoderLayer(nn.Module):
    def __init__(self, masked, **options):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, **options)
        self.masked = masked

    def forward(self, src, padding):
        return self.layer(src, src_key_padding_mask=padding if self.masked else None)


@pytest.mark.parametrize("options", [{}, {"norm_first": True, "activation": "gelu"}], ids=["post_norm_relu",
                                                                                       "pre_norm_gelu"])
@pytest.mark.parametrize("masked", [True, False])
def test_traced_transformer_encoder_layer_fast_path(options, masked):
    torch.manual_seed(0)
    inputs = [torch.randn(2, 5, 16), _padding()]
    with torch.no_grad():
        traced = torch.jit.trace(EncoderLayer(masked, **options).eval(), tuple(inputs))
    assert "_transformer_encoder_layer_fwd" in str(traced.inlined_graph)
    assert "_transformer_encoder_layer_fwd" not in str(_assert_matches(traced, inputs).graph)


class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, q):
        return self.attention(q, q, q)[0]


class Encode(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)

    def forward(self, src):
        return self.layer(src)


def test_attributes_freezing_keeps_are_folded():
    torch.manual_seed(0)
    model, q = Attend().eval(), torch.randn(2, 5, 16)
    frozen = torch.jit.freeze(torch.jit.script(model))
    assert "prim::GetAttr" in str(frozen.graph)  # freezing cannot prove in_proj_weight unwritten
    fold_frozen_attributes(frozen)
    graph = frozen.graph.copy()
    lower(graph)
    assert "prim::GetAttr" not in str(graph)
    assert next(graph.inputs()).uses() == []
    graph.eraseInput(0)
    run = torch._C._create_function_from_graph("forward", graph)
    with torch.no_grad():
        torch.testing.assert_close(run(q), model(q), rtol=1e-4, atol=1e-5)


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        view = self.count[0:1]
        view.add_(1)
        return x + self.count


def test_attribute_written_through_a_view_is_not_folded():
    frozen = torch.jit.freeze(torch.jit.script(Counter().eval()))
    fold_frozen_attributes(frozen)
    assert 'prim::GetAttr[name="count"]' in str(frozen.graph)
    x = torch.zeros(1)
    frozen(x)
    assert frozen(x).item() == 2


def test_scripted_multihead_attention():
    torch.manual_seed(0)
    model, q = Attend().eval(), torch.randn(2, 5, 16)
    compiled = torch_trt.compile(torch.jit.script(model), inputs=[q], **REFERENCE)
    torch.testing.assert_close(compiled(q), model(q), rtol=1e-4, atol=1e-5)


def test_scripted_transformer_encoder_layer():
    torch.manual_seed(0)
    model, src = Encode().eval(), torch.randn(2, 5, 16)
    compiled = torch_trt.compile(torch.jit.script(model), inputs=[src], **REFERENCE)
    torch.testing.assert_close(compiled(src), model(src), rtol=1e-4, atol=1e-5)


def test_scripted_group_norm():
    torch.manual_seed(0)
    _assert_matches(torch.jit.script(nn.GroupNorm(2, 4).eval()), [torch.randn(2, 4, 3, 3)])
