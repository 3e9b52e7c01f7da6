"""Decompositions on the dynamo path: an op with no converter whose decomposition converts costs no fallback."""

import warnings

import pytest
import torch
from torch import nn

from dynamo_harness import check_compiled, engine_calls, pytorch_ops
from torch_trt._settings import CompileSettings
from torch_trt.backend import decompositions, dynamo
from torch_trt.backend.decompositions import DECOMPOSED, decompose
from torch_trt.conversion.registry import CONVERTERS, Registration

aten = torch.ops.aten


class ScaledProduct(nn.Module):
    """linear -> addcmul with a parameter -> relu -> linear: addcmul sits between two convertible runs."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)
        self.scale = nn.Parameter(torch.randn(8))

    def forward(self, x, gate):
        return self.fc2(torch.relu(torch.addcmul(self.fc1(x), self.scale, gate, value=0.5)))


def calls(*batches):
    return [(torch.randn(b, 4), torch.randn(b, 8)) for b in batches]


def options(**extra):
    return {"target": "reference", "min_block_size": 1, **extra}


@pytest.fixture(autouse=True)
def addcmul_has_no_converter():
    assert ("aten::addcmul", "") not in CONVERTERS, "aten::addcmul got a converter: pick another op for these tests"


def test_an_op_without_converter_whose_decomposition_converts_compiles_to_one_engine(builds):
    check_compiled(ScaledProduct().eval(), calls(5), options())
    assert engine_calls(builds) == 1 and pytorch_ops(builds) == []


def test_without_the_decomposition_the_op_falls_back_between_two_engines(builds, monkeypatch):
    monkeypatch.setattr(dynamo, "decompose", lambda gm, args, settings: gm)
    check_compiled(ScaledProduct().eval(), calls(5), options())
    assert engine_calls(builds) == 2 and pytorch_ops(builds) == ["aten::addcmul"]


def test_decomposed_graph_keeps_a_dynamic_batch_in_one_engine(builds):
    check_compiled(ScaledProduct().eval(), calls(7, 32, 3), options(), dynamic=True)
    assert len(builds) == 1 and engine_calls(builds) == 1


def test_an_op_the_user_sends_to_pytorch_stays_whole(builds):
    check_compiled(ScaledProduct().eval(), calls(5), options(torch_executed_ops={"aten::addcmul"}))
    assert pytorch_ops(builds) == ["aten::addcmul"]


def test_a_decomposition_into_an_op_that_would_fall_back_is_not_used(builds):
    check_compiled(ScaledProduct().eval(), calls(5), options(torch_executed_ops={"aten::mul.Tensor"}))
    assert "aten::addcmul" in pytorch_ops(builds)


def graph_of(function, *example):
    """The FX graph dynamo hands the backend for `function`, with its example inputs."""
    captured = []

    def backend(gm, inputs):
        captured.append((gm, inputs))
        return gm.forward

    torch.compile(function, backend=backend)(*example)
    return captured[0]


def targets(gm):
    return [node.target for node in gm.graph.nodes if node.op == "call_function"]


def test_an_op_with_a_converter_is_never_decomposed(monkeypatch):
    gm, inputs = graph_of(lambda x: torch.nn.functional.hardswish(x) * 2, torch.randn(3, 4))
    monkeypatch.setitem(CONVERTERS, ("aten::hardswish", ""), Registration(lambda ctx, node, args: None, None))
    assert decompose(gm, inputs, CompileSettings()) is gm


def test_ops_we_convert_whole_stay_whole():
    attention = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    norm, conv = nn.LayerNorm(8).eval(), nn.Conv1d(4, 4, 3).eval()

    def model(x, image):
        return norm(attention(x, x, x, need_weights=False)[0]).sum() + conv(image).sum()

    gm, inputs = graph_of(model, torch.randn(2, 4, 8), torch.randn(2, 4, 8))
    assert decompose(gm, inputs, CompileSettings()) is gm


def test_what_is_decomposed_is_logged(caplog):
    gm, inputs = graph_of(lambda x, y: torch.addcmul(x, x, y) + torch.addcmul(y, x, y), torch.randn(3), torch.randn(3))
    with caplog.at_level("INFO", logger=decompositions.__name__):
        decomposed = decompose(gm, inputs, CompileSettings())
    assert aten.addcmul.default not in targets(decomposed) and torch.addcmul not in targets(decomposed)
    assert "aten::addcmul x2" in caplog.text


def positive(*shape):
    return torch.rand(*shape) + 0.25


# op -> random arguments (keyword arguments last, as a dict); each decomposition is traced on one draw, run on another.
CASES = {
    aten.addcmul.default: lambda: (torch.randn(2, 3), torch.randn(2, 3), torch.randn(3), {"value": 0.5}),
    aten.addcdiv.default: lambda: (torch.randn(2, 3), torch.randn(2, 3), positive(2, 3), {"value": 2.0}),
    aten.rsub.Tensor: lambda: (torch.randn(2, 3), torch.randn(3), {"alpha": 3.0}),
    aten.baddbmm.default: lambda: (torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5),
                                   {"beta": 0.5, "alpha": 2.0}),
    aten.hardswish.default: lambda: (torch.randn(2, 3) * 5,),
    aten.hardsigmoid.default: lambda: (torch.randn(2, 3) * 5,),
    aten.mish.default: lambda: (torch.randn(2, 3),),
    aten.softplus.default: lambda: (torch.randn(2, 3) * 10, 2.0, 5.0),
    aten.celu.default: lambda: (torch.randn(2, 3), 1.5),
    aten.threshold.default: lambda: (torch.randn(2, 3), 0.1, 2.0),
    aten.hardshrink.default: lambda: (torch.randn(2, 3), 0.3),
    aten.softshrink.default: lambda: (torch.randn(2, 3), 0.3),
    aten.logit.default: lambda: (torch.rand(2, 3), 0.05),
    aten.xlogy.Tensor: lambda: (torch.rand(2, 3).round(), positive(2, 3)),
    aten.sinc.default: lambda: (torch.randn(2, 3).round(),),
    aten.frac.default: lambda: (torch.randn(2, 3) * 5,),
    aten.deg2rad.default: lambda: (torch.randn(2, 3) * 180,),
    aten.rad2deg.default: lambda: (torch.randn(2, 3),),
}


def test_every_decomposition_has_a_case():
    assert set(CASES) == set(DECOMPOSED)


@pytest.mark.parametrize("op", list(CASES), ids=str)
def test_decomposition_traces_into_ops_that_compute_it_for_other_inputs(op):
    torch.manual_seed(0)
    traced_args, other_args = split_keywords(CASES[op]()), split_keywords(CASES[op]())
    tensors = [i for i, a in enumerate(traced_args[0]) if isinstance(a, torch.Tensor)]

    def call(*values):
        args = list(traced_args[0])
        for i, value in zip(tensors, values):
            args[i] = value
        return DECOMPOSED[op](*args, **traced_args[1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(call, tuple(traced_args[0][i] for i in tensors), check_trace=False)
    expected = op(*other_args[0], **other_args[1])
    torch.testing.assert_close(traced(*(other_args[0][i] for i in tensors)), expected, rtol=1e-5, atol=1e-5)


def split_keywords(args):
    """(positional arguments, keyword arguments) of a CASES row."""
    return (args[:-1], args[-1]) if isinstance(args[-1], dict) else (args, {})


F = torch.nn.functional
# op -> the torch function users call for it; the decomposition pass looks for ops only in graphs naming one of them.
ENTRY_POINTS = {
    aten.addcmul.default: torch.addcmul, aten.addcdiv.default: torch.addcdiv, aten.rsub.Tensor: torch.rsub,
    aten.baddbmm.default: torch.baddbmm, aten.hardswish.default: F.hardswish, aten.hardsigmoid.default: F.hardsigmoid,
    aten.mish.default: F.mish, aten.softplus.default: F.softplus, aten.celu.default: F.celu,
    aten.threshold.default: F.threshold, aten.hardshrink.default: F.hardshrink, aten.softshrink.default: F.softshrink,
    aten.logit.default: torch.special.logit, aten.xlogy.Tensor: torch.special.xlogy, aten.sinc.default: torch.sinc,
    aten.frac.default: torch.frac, aten.deg2rad.default: torch.deg2rad, aten.rad2deg.default: torch.rad2deg,
}


# Entry points whose graph has nothing to decompose, converters or not: lowering converts aten::rsub.Tensor whole,
# and dynamo traces torch.addcdiv as div, mul and add.
NOTHING_TO_DECOMPOSE = {aten.rsub.Tensor, aten.addcdiv.default}


@pytest.mark.parametrize("op", list(CASES), ids=str)
def test_looking_for_decomposed_ops_only_in_graphs_naming_one_misses_none(op, monkeypatch):
    """The torch function of each decomposed op, in a graph where the op has no converter: the graph is decomposed
    exactly as when every graph is run on fake tensors to find the ops."""
    for key in [key for key in CONVERTERS if key[0] == f"aten::{op._opname}"]:
        monkeypatch.delitem(CONVERTERS, key)
    torch.manual_seed(0)
    args, kwargs = split_keywords(CASES[op]())
    tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    def call(*values):
        full = list(args)
        for i, value in zip(tensors, values):
            full[i] = value
        return ENTRY_POINTS[op](*full, **kwargs) * 2

    gm, inputs = graph_of(call, *(args[i] for i in tensors))
    decomposed = decompose(gm, inputs, CompileSettings()) is not gm
    monkeypatch.setattr(decompositions, "_may_call_a_decomposed_op", lambda gm: True)
    assert decomposed == (decompose(gm, inputs, CompileSettings()) is not gm) == (op not in NOTHING_TO_DECOMPOSE)


def test_a_graph_naming_no_decomposed_op_is_not_run(monkeypatch):
    """Finding the op each node dispatches to runs the graph on fake tensors; a graph whose functions name none of
    the decomposed ops skips that."""
    monkeypatch.setattr(decompositions, "_single_op_calls", lambda gm, args: pytest.fail("the graph was run"))
    gm, inputs = graph_of(lambda x: torch.relu(torch.nn.functional.linear(x, x)) - 1, torch.randn(3, 3))
    assert decompose(gm, inputs, CompileSettings()) is gm
