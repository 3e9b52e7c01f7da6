"""torch_trt.compile on an nn.Module: the user's module keeps its mode, and the tracing fallback says what it did."""

import logging
import math
import warnings
from typing import Union

import pytest
import torch
from torch import nn

import torch_trt
from torch_trt.errors import LoweringError

REFERENCE = {"target": "reference", "min_block_size": 1}


class BranchesOnData(nn.Module):
    """Not scriptable (*args), and its result depends on a Python `if` on the input's values."""

    def forward(self, x, *rest):
        if x.sum() > 0:
            return torch.relu(x) * 2
        return x - 1


class NotScriptable(nn.Module):
    """Not scriptable (*args); no control flow, so a trace is exact."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, *rest):
        return torch.relu(self.fc(x))


def test_traced_data_dependent_if_is_refused_naming_the_line():
    with pytest.raises(LoweringError) as caught:
        torch_trt.compile(BranchesOnData(), inputs=[torch.ones(2, 3)], **REFERENCE)
    message = str(caught.value)
    assert f"{__file__}:" in message and "if x.sum() > 0:" in message
    assert "allow_traced_control_flow=True" in message
    assert "can't take variable number of arguments" in message  # why scripting failed


class ReadsAValueIntoPython(nn.Module):
    def forward(self, x, *rest):
        if x.max().item() > 0:
            return x * 2
        return x - 1


class ShiftsByAValueReadIntoPython(nn.Module):
    def forward(self, x, *rest):
        return x - float(x.min())


class KeepsAsManyAsAreNonzero(nn.Module):
    def forward(self, x, *rest):
        return x.reshape(-1)[:int(x.nonzero().size(0))] + 1  # random examples have no zeros: every trace kept all


@pytest.mark.parametrize("module,line", [(ReadsAValueIntoPython, "if x.max().item() > 0:"),
                                         (ShiftsByAValueReadIntoPython, "return x - float(x.min())"),
                                         (KeepsAsManyAsAreNonzero, "x.reshape(-1)[:int(x.nonzero().size(0))]")])
@pytest.mark.parametrize("sign", [1, -1], ids=["positive_example", "negative_example"])
def test_traced_values_read_into_python_are_refused_naming_the_line(module, line, sign):
    """`.item()` and float() of a tensor stay the example's values in a trace, as an `if` on a tensor does; found
    whichever side of the branch the example took."""
    example = sign * (torch.rand(2, 3) + 0.1)
    with pytest.raises(LoweringError, match="allow_traced_control_flow=True") as caught:
        torch_trt.compile(module(), inputs=[example], **REFERENCE)
    assert line in str(caught.value)


def test_refusal_holds_when_the_user_silenced_tracer_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        with pytest.raises(LoweringError, match="if x.sum"):
            torch_trt.compile(BranchesOnData(), inputs=[torch.ones(2, 3)], **REFERENCE)


def test_allow_traced_control_flow_keeps_the_examples_branch_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch_trt.compile(BranchesOnData(), inputs=[torch.ones(2, 3)], allow_traced_control_flow=True,
                                     **REFERENCE)
    x = torch.rand(2, 3) + 0.1
    torch.testing.assert_close(compiled(x), torch.relu(x) * 2)
    assert "torch.jit.script failed on BranchesOnData" in caplog.text
    assert "Converting a tensor to a Python boolean" in caplog.text and "if x.sum() > 0:" in caplog.text


def test_tracing_fallback_is_a_warning_with_the_script_error(caplog):
    model = NotScriptable().eval()
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch_trt.compile(model, inputs=[torch.randn(2, 4)], **REFERENCE)
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    [record] = [r for r in caplog.records if "torch.jit.script failed" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "can't take variable number of arguments" in record.getMessage() and "tracing it" in record.getMessage()


def test_compile_docstring_documents_the_tracing_fallback():
    doc = torch_trt.compile.__doc__
    assert "traced" in doc and "allow_traced_control_flow" in doc and "eval mode" in doc


class TrainsDifferently(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.bn, self.drop = nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x)))


@pytest.mark.parametrize("make", [
    lambda: TrainsDifferently(),
    lambda: torch.jit.script(TrainsDifferently()),
], ids=["nn.Module", "ScriptModule"])
def test_compile_leaves_the_users_module_in_its_mode(make):
    model = make().train()
    model.fc.eval()  # a mix of modes comes back as it was
    modes = [m.training for m in model.modules()]
    compiled = torch_trt.compile(model, inputs=[torch.randn(3, 4)], **REFERENCE)
    assert [m.training for m in model.modules()] == modes
    x = torch.randn(3, 4)
    model.eval()
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)  # compiled as in eval mode


def test_a_module_in_training_mode_compiles_in_eval_mode_with_a_warning_naming_it(caplog):
    model = TrainsDifferently().train()
    model.fc.eval()
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        torch_trt.compile(model, inputs=[torch.randn(3, 4)], **REFERENCE)
    assert "TrainsDifferently, bn, drop are in training mode; torch_trt compiles in eval mode" in caplog.text


def test_a_module_in_eval_mode_compiles_without_a_training_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        torch_trt.compile(TrainsDifferently().eval(), inputs=[torch.randn(3, 4)], **REFERENCE)
    assert "training mode" not in caplog.text


def test_traced_module_is_left_in_its_mode():
    model = NotScriptable().train()
    torch_trt.compile(model, inputs=[torch.randn(2, 4)], **REFERENCE)
    assert all(m.training for m in model.modules())


def test_an_already_frozen_module_gets_a_clear_error():
    frozen = torch.jit.freeze(torch.jit.script(torch.nn.Sequential(torch.nn.Linear(3, 3)).eval()))
    with pytest.raises(TypeError, match="already frozen ScriptModule; pass it before torch.jit.freeze"):
        torch_trt.compile(frozen, [torch.randn(2, 3)], target="reference")


class DecodesWithItsCache(nn.Module):
    """A small Mistral returning (last_hidden_state, DynamicCache): use_cache is on by default."""

    def __init__(self):
        super().__init__()
        import transformers

        self.model = transformers.MistralModel(transformers.MistralConfig(
            vocab_size=99, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
            intermediate_size=37, max_position_embeddings=64))

    def forward(self, ids):
        return self.model(ids, return_dict=False)


def test_a_trace_refusing_a_result_says_why_in_a_few_words():
    """The tracer's message printed every tensor of the result (5,700 characters) before naming the type it cannot
    take."""
    with pytest.raises(LoweringError) as raised:
        torch_trt.compile(DecodesWithItsCache().eval(), [torch_trt.Input((2, 8), dtype=torch.int64)],
                          allow_traced_control_flow=True, **REFERENCE)
    message = str(raised.value)
    assert "got value of type DynamicCache" in message and len(message) < 400, message


class EncodesToo(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))

    @torch.jit.export
    def encode(self, x):
        return self.fc(x) + 1


class EncodesByInheritance(EncodesToo):
    pass


@pytest.mark.parametrize("module", [EncodesToo, EncodesByInheritance])
def test_exported_methods_left_out_of_the_compiled_module_are_named_in_a_warning(caplog, module):
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch_trt.compile(module().eval(), [torch.randn(2, 4)], **REFERENCE)
    assert f"{module.__name__}'s exported methods encode are not in the compiled module" in caplog.text
    assert not hasattr(compiled, "encode")


def test_a_module_without_exported_methods_warns_of_none(caplog):
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        torch_trt.compile(nn.MultiheadAttention(8, 2).eval(), [torch.randn(3, 2, 8)] * 3, **REFERENCE)
    assert "exported methods" not in caplog.text  # merge_masks, which forward calls, is scripted, not exported


class HalfGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x))

    @staticmethod
    def backward(ctx, grad):
        return grad


class CallsAnAutogradFunction(nn.Module):
    """Not scriptable (*args), and its trace records the Function's apply as a prim::PythonOp (BLOOM's GeLU)."""

    def forward(self, x, *rest):
        return HalfGelu.apply(x * 2 + 1) * 3


@pytest.mark.parametrize("entry", [torch_trt.compile, torch_trt.explain], ids=["compile", "explain"])
def test_a_traced_call_of_an_autograd_function_is_refused_naming_it(entry):
    """compile failed in torch.jit.save after building the engines (explain planned two around the call)."""
    with pytest.raises(LoweringError, match="calls the Python function HalfGelu .a torch.autograd.Function., which"):
        entry(CallsAnAutogradFunction(), [torch.randn(2, 3)], **REFERENCE)


class CountsItsCalls(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x):
        self.calls.add_(1)
        return x * self.calls


def test_a_module_writing_its_buffer_gets_an_error_naming_it():
    """Freezing keeps a written buffer on the module, whose graph then takes `self`: the error said only that graph
    input %self is not a tensor."""
    with pytest.raises(torch_trt.errors.TorchTRTError, match=r"writes its own attributes in forward \(self\.calls\)"):
        torch_trt.compile(torch.jit.script(CountsItsCalls()), [torch.randn(2)], target="reference", min_block_size=1)


class LoopsOverASize(nn.Module):
    """Not scriptable (*args); a trace unrolls the loop to the example's size, without a TracerWarning."""

    def forward(self, x, *rest):
        y = x
        for _ in range(x.size(1) - 1):
            y = y + x * 0.1
        return y


class ScalesByASize(nn.Module):
    """Not scriptable (*args); a trace makes the square root of the example's size a constant."""

    def forward(self, x, *rest):
        return x / math.sqrt(x.size(1))


class ReshapesByASize(nn.Module):
    """Not scriptable (*args); a trace records the size it reshapes by, so it holds at every size."""

    def forward(self, x, *rest):
        return x.reshape(x.size(0), -1) * 2


DYNAMIC = torch_trt.Input(min_shape=(1, 2), opt_shape=(4, 10), max_shape=(8, 16))


@pytest.mark.parametrize("module", [LoopsOverASize(), ScalesByASize()], ids=lambda m: type(m).__name__)
def test_a_trace_that_fixes_sizes_is_refused_for_dynamic_inputs(module):
    """Compiled for dynamic shapes, such a trace gave results off by 0.3-1.6 at every size but the example's."""
    with pytest.raises(LoweringError, match=r"traced at input shapes \[\(1, 2\)\] it records another graph"):
        torch_trt.compile(module, inputs=[DYNAMIC], device="cpu", **REFERENCE)


class ScalesByParityOfASize(nn.Module):
    """Not scriptable (*args); a trace makes the parity of the example's width a constant."""

    def forward(self, x, *rest):
        return x * math.fmod(x.size(1), 2)


def test_a_trace_is_checked_beside_the_opt_shape_too():
    """The width's parity is 0 at min, opt and max (2, 4, 8): the traces there agreed, and the engine gave 0 at odd
    widths."""
    with pytest.raises(LoweringError, match=r"traced at input shapes \[\(2, 5\)\] it records another graph"):
        torch_trt.compile(ScalesByParityOfASize(), device="cpu", **REFERENCE,
                          inputs=[torch_trt.Input(min_shape=(2, 2), opt_shape=(2, 4), max_shape=(2, 8))])


class ScalesByARatioOfSizes(nn.Module):
    """Not scriptable (*args); a trace makes the ratio of the examples' widths a constant."""

    def forward(self, x, y, *rest):
        return y * (float(x.size(1)) / float(y.size(1)))


WIDTHS = torch_trt.Input(min_shape=(2, 2), opt_shape=(2, 8), max_shape=(2, 16))


def test_a_trace_is_checked_at_unequal_sizes_of_like_inputs():
    """Two Inputs of one range have equal widths at min, opt, beside opt and max: the ratio traced as 1 everywhere,
    and the engine gave y at widths (4, 2) where eager gives 2 * y."""
    with pytest.raises(LoweringError, match=r"traced at input shapes \[\(2, 2\), \(2, 16\)\] it records another"):
        torch_trt.compile(ScalesByARatioOfSizes(), inputs=[WIDTHS, WIDTHS], device="cpu", **REFERENCE)


class AddsTwoOfOneSize(nn.Module):
    """Not scriptable (*args); traced at unequal widths it fails, which says nothing about the trace."""

    def forward(self, x, y, *rest):
        return x + y


def test_inputs_that_must_match_are_not_refused_by_the_unequal_sizes_trace():
    compiled = torch_trt.compile(AddsTwoOfOneSize(), inputs=[WIDTHS, WIDTHS], device="cpu", **REFERENCE)
    x = torch.randn(2, 7)
    torch.testing.assert_close(compiled(x, x), AddsTwoOfOneSize()(x, x))


def test_a_trace_that_holds_at_every_size_compiles_for_dynamic_inputs():
    compiled = torch_trt.compile(ReshapesByASize(), inputs=[DYNAMIC], device="cpu", **REFERENCE)
    for shape in ((1, 2), (3, 7), (8, 16)):
        x = torch.randn(shape)
        torch.testing.assert_close(compiled(x), ReshapesByASize()(x))


class ReturnsNumbersFromSizes(nn.Module):
    def forward(self, x, *rest):  # *rest: not scriptable, so traced
        return x.relu(), x.size(0) * 2, (x.size(1) / 2.0, x.size(0) > 2), [x.size(0), x.size(1)], x.sum()


def test_a_traced_module_returns_the_numbers_it_returns_in_eager(tmp_path):
    """A trace records numbers computed from sizes as 0-d tensors; the compiled module returns them as eager does,
    following the sizes, after a save and load too (a 0-d tensor result stays one)."""
    model = ReturnsNumbersFromSizes()
    compiled = torch_trt.compile(model, inputs=[torch_trt.Input(min_shape=(1, 5), opt_shape=(4, 5),
                                                                max_shape=(8, 5))], device="cpu", **REFERENCE)
    torch.jit.save(compiled, tmp_path / "numbers.ts")
    loaded = torch.jit.load(tmp_path / "numbers.ts")
    for module in (compiled, loaded):
        for rows in (4, 1, 7):
            x = torch.randn(rows, 5)
            with torch.no_grad():
                out, expected = module(x), model(x)
            assert out[1:4] == expected[1:4] and type(out[1]) is int and type(out[2][0]) is float
            assert type(out[2][1]) is bool and all(type(size) is int for size in out[3])
            torch.testing.assert_close(out[4], expected[4])


def test_forward_arguments_without_an_input_are_compiled_at_their_defaults_and_checked_on_every_call(tmp_path):
    """nn.TransformerEncoder's forward takes (src, mask=None, src_key_padding_mask=None, is_causal=None): compiling it
    was refused ("forward's argument is_causal is a Optional[bool]"). Compiled at the defaults, a mask passed later
    would be ignored by the engines, so the compiled module refuses it, after a save and load too."""
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 5, 16)
    compiled = torch_trt.compile(model, [x], device="cpu", **REFERENCE)
    assert compiled.graph.findAllNodes("torch_trt::execute_engine")
    torch.jit.save(compiled, tmp_path / "encoder.ts")
    for module in (compiled, torch.jit.load(tmp_path / "encoder.ts")):
        with torch.no_grad():
            torch.testing.assert_close(module(x), model(x), rtol=1e-4, atol=1e-4)
            with pytest.raises(RuntimeError, match=r"argument mask was compiled at its default \(None\)"):
                module(x, torch.zeros(5, 5))
            with pytest.raises(RuntimeError, match=r"argument is_causal was compiled at its default \(None\)"):
                module(x, None, None, False)


def test_multihead_attention_with_other_key_and_value_sizes_compiles_into_one_engine():
    """F.multi_head_attention_forward checks each projection bias's shape in an If that gives the bias back, and scales
    the query by math.sqrt(1.0 / float(E)): the Optional bias failed an internal assert of TorchScript in lowering,
    and float() of a Scalar had no evaluator (no overload taking a Scalar had one), which ran between two engines."""
    model = nn.MultiheadAttention(16, 2, kdim=8, vdim=12, batch_first=True).eval()
    q, k, v = torch.randn(2, 5, 16), torch.randn(2, 7, 8), torch.randn(2, 7, 12)
    compiled = torch_trt.compile(model, [q, k, v], device="cpu", **REFERENCE)
    assert len(compiled.graph.findAllNodes("torch_trt::execute_engine")) == 1
    with torch.no_grad():
        for got, expected in zip(compiled(q, k, v), model(q, k, v)):
            torch.testing.assert_close(got, expected)


class ScalesByDefault(nn.Module):
    def forward(self, x, scale: float = 2.0, negate: bool = False):
        return -x * scale if negate else x * scale


def test_an_argument_passed_at_its_default_value_is_accepted_and_another_value_refused():
    compiled = torch_trt.compile(ScalesByDefault(), [torch.randn(3)], device="cpu", **REFERENCE)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, 2.0, False), x * 2)
    with pytest.raises(RuntimeError, match=r"argument scale was compiled at its default \(2.0\)"):
        compiled(x, 3.0)


class DividesByDefault(nn.Module):
    def forward(self, x, zero: float = 0.0, offset: float = float("nan")):
        return x / zero + offset


def test_a_float_argument_is_checked_against_its_default_exactly():
    """-0.0 == 0.0 let a call passing -0.0 run at 0.0 (the quotients' signs flipped); NaN != NaN refused every call."""
    compiled = torch_trt.compile(DividesByDefault(), [torch.randn(2)], device="cpu", **REFERENCE)
    x = torch.tensor([1.0, -2.0])
    torch.testing.assert_close(compiled(x, 0.0, float("nan")), DividesByDefault()(x), equal_nan=True)
    with pytest.raises(RuntimeError, match=r"argument zero was compiled at its default \(0.0\)"):
        compiled(x, -0.0)
    with pytest.raises(RuntimeError, match=r"argument offset was compiled at its default \(nan\)"):
        compiled(x, 0.0, 1.0)


class BranchesOnAUnion(nn.Module):
    def forward(self, x, scale: Union[int, float] = 1):
        return x * 2 if isinstance(scale, int) else x * 3


def test_an_argument_of_a_union_type_without_an_input_is_refused():
    """Compiled for the int default, a call passing 1.0 passed the check (1.0 == 1) and took the int branch."""
    with pytest.raises(torch_trt.errors.TorchTRTError, match=r"argument scale has no Input, and its default \(1\) "
                                                            r"of type Union\[float, int\] is not one"):
        torch_trt.compile(BranchesOnAUnion(), [torch.randn(3)], device="cpu", **REFERENCE)


class TakesTwoTensors(nn.Module):
    def forward(self, x, y):
        return x + y


def test_an_argument_without_a_default_or_an_input_gets_an_error_naming_it():
    with pytest.raises(torch_trt.errors.TorchTRTError, match=r"argument y has no default and no Input stands for it"):
        torch_trt.compile(TakesTwoTensors(), [torch.randn(3)], device="cpu", **REFERENCE)


class LooksUpNormalisedRows(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(6, 4, max_norm=0.5)

    def forward(self, ids):
        return self.table(ids) * 2


@pytest.mark.parametrize("scripted", [False, True], ids=["module", "script_module"])
def test_an_embedding_with_max_norm_is_refused(scripted):
    """TorchScript's F.embedding leaves out max_norm's renormalisation: the engine returned rows of norm up to 2.6
    where eager's are at most 0.5, with no warning."""
    module = torch.jit.script(LooksUpNormalisedRows()) if scripted else LooksUpNormalisedRows()
    with pytest.raises(LoweringError, match=r"Embedding 'table' has max_norm=0.5, whose renormalisation TorchScript"):
        torch_trt.compile(module, inputs=[torch.tensor([[0, 2], [2, 5]])], device="cpu", **REFERENCE)


class CallsEmbeddingWithMaxNorm(nn.Module):
    def __init__(self, bag):
        super().__init__()
        self.weight, self.bag = nn.Parameter(torch.randn(6, 4) * 3), bag

    def forward(self, ids):
        if self.bag:
            return nn.functional.embedding_bag(ids, self.weight, max_norm=0.5) * 2
        return nn.functional.embedding(ids, self.weight, max_norm=0.5) * 2


@pytest.mark.parametrize("bag", [False, True], ids=["embedding", "embedding_bag"])
def test_a_functional_embedding_with_max_norm_is_refused_naming_the_line(bag):
    """Called in forward, the max_norm shows only in the scripted call; the engine returned unrenormalised rows."""
    with pytest.raises(LoweringError, match=r"F\.embedding(_bag)? is called with a max_norm at .*test_compile_module"):
        torch_trt.compile(CallsEmbeddingWithMaxNorm(bag), inputs=[torch.tensor([[0, 2], [2, 5]])], device="cpu",
                          **REFERENCE)


def test_a_functional_embedding_without_max_norm_compiles():
    class LooksUp(CallsEmbeddingWithMaxNorm):
        def forward(self, ids):
            return nn.functional.embedding(ids, self.weight) * 2

    ids, model = torch.tensor([[0, 2], [2, 5]]), LooksUp(False)
    compiled = torch_trt.compile(model, inputs=[ids], device="cpu", **REFERENCE)
    torch.testing.assert_close(compiled(ids), model(ids))


class FullOfTrue(nn.Module):
    def forward(self, x):
        return torch.full((2,), True), x + 1


def test_a_module_scripted_to_other_result_dtypes_is_refused_naming_the_result():
    """TorchScript makes the bool fill value an int: the compiled module returned int64 where eager returns bool."""
    with pytest.raises(LoweringError, match=r"result\[0\] is torch.int64 of shape \(2,\) scripted, torch.bool of "
                                            r"shape \(2,\) in eager"):
        torch_trt.compile(FullOfTrue(), inputs=[torch_trt.Input((2, 3))], device="cpu", **REFERENCE)


class SplitsAndDraws(nn.Module):
    def forward(self, x):
        return x.split(2, dim=1), x + torch.rand_like(x)  # a list when scripted, a tuple in eager; random values


def test_a_scripted_list_for_a_tuple_and_random_values_are_not_differences():
    compiled = torch_trt.compile(SplitsAndDraws(), inputs=[torch.randn(2, 4)], device="cpu", **REFERENCE)
    chunks, noisy = compiled(torch.zeros(2, 4))
    assert [tuple(chunk.shape) for chunk in chunks] == [(2, 2), (2, 2)] and noisy.shape == (2, 4)


class ScalesOnlyWhenScripted(nn.Module):
    def forward(self, x):
        if torch.jit.is_scripting():  # a library's scripted path that computes otherwise
            return x * 2, x.size(0)
        return x, x.size(0)


def test_a_module_scripted_to_other_values_is_refused_naming_the_result():
    with pytest.raises(LoweringError, match=r"result\[0\] differs from eager's by up to 1") as caught:
        torch_trt.compile(ScalesOnlyWhenScripted(), inputs=[torch.ones(2, 3)], device="cpu", **REFERENCE)
    assert "result[1]" not in str(caught.value)


class EncodesWithPadding(nn.Module):
    def __init__(self, nested):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=nested)

    def forward(self, x, padding):
        return self.encoder(x, src_key_padding_mask=padding)


def test_a_nested_tensor_fast_path_is_refused_saying_how_to_avoid_it():
    """It failed in shape analysis with PyTorch's "NestedTensorImpl doesn't support sizes"."""
    x, padding = torch.randn(2, 5, 16), torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=torch.bool)
    with pytest.raises(LoweringError, match="makes a nested tensor.*enable_nested_tensor=False"):
        torch_trt.compile(EncodesWithPadding(True).eval(), inputs=[x, padding], device="cpu", **REFERENCE)
    dense = EncodesWithPadding(False).eval()
    compiled = torch_trt.compile(dense, inputs=[x, padding], device="cpu", **REFERENCE)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, padding), dense(x, padding))


class CountsItsCallsTraced(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.calls = nn.Linear(4, 4), 0

    def forward(self, x, *rest):  # *rest: traced
        self.calls += 1
        return self.fc(x) * self.calls


class CachesOnFirstCall(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, *rest):
        if not hasattr(self, "offset"):
            self.offset = x.mean()
        return self.fc(x) + self.offset


@pytest.mark.parametrize("module,written", [(CountsItsCallsTraced, "self.calls"), (CachesOnFirstCall, "self.offset")])
def test_a_traced_forward_writing_its_attributes_is_refused_and_they_are_put_back(module, written):
    """The trace fixed the traced call's values: the counter stayed 1 on every call; the cached offset was
    recomputed from every input."""
    model = module().eval()
    with pytest.raises(LoweringError, match=rf"writes its own attributes \({written}\)"):
        torch_trt.compile(model, inputs=[torch.randn(2, 4)], device="cpu", **REFERENCE)
    assert vars(model).get("calls", 0) == 0 and not hasattr(model, "offset")


def test_a_value_cached_before_compiling_is_compiled_as_a_constant():
    model, x = CachesOnFirstCall().eval(), torch.randn(2, 4)
    with torch.no_grad():
        model(x)
        compiled = torch_trt.compile(model, inputs=[x], device="cpu", **REFERENCE)
        torch.testing.assert_close(compiled(x * 5), model(x * 5))


class CountsInPython(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0.0

    def forward(self, x):
        self.calls += 1.0
        return x * self.calls


def test_the_eager_check_leaves_the_modules_attributes_as_they_were():
    """It runs forward twice on the examples; the refusal that follows must not leave the count at 2."""
    model = CountsInPython()
    with pytest.raises(torch_trt.errors.TorchTRTError, match=r"writes its own attributes in forward \(self\.calls\)"):
        torch_trt.compile(model, inputs=[torch.randn(2)], device="cpu", **REFERENCE)
    assert model.calls == 0.0


class CountsInABufferTraced(CountsItsCalls):
    def forward(self, x, *rest):  # *rest: traced
        return super().forward(x)


class CountsInANewBuffer(CountsItsCalls):
    def forward(self, x):
        self.calls = self.calls + 1
        return x * self.calls


@pytest.mark.parametrize("module", [CountsItsCalls, CountsInABufferTraced, CountsInANewBuffer])
def test_compiling_leaves_the_modules_buffers_as_they_were(module):
    """The checks run forward on the examples (scripted, traced, eager): a buffer it adds to in place, or sets anew,
    was left at the count of those runs after the refusal."""
    model = module().eval()
    with pytest.raises(torch_trt.errors.TorchTRTError, match=r"writes its own attributes.*self\.calls"):
        torch_trt.compile(model, inputs=[torch.randn(2)], device="cpu", **REFERENCE)
    assert model.calls.item() == 0 and model.calls is model._buffers["calls"]
