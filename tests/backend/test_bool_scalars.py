"""Python bools passed where an op takes a Scalar: TorchScript has no bool Scalar, so the trace recorded nodes that no
schema matches. The trace failed (the whole graph ran in PyTorch) or, for `x * True` left in PyTorch, the call
raised an internal assert of TorchScript's alias analysis."""

import operator

import pytest
import torch
from dynamo_harness import REFERENCE, engine_calls, pytorch_ops

from torch_trt.backend.fx_to_script import _bool_scalars_as_numbers

MASK = torch.tensor([True, False, True, False])
CASES = {
    "float times True": lambda x, m: torch.relu(x * True),
    "True times float": lambda x, m: torch.relu(operator.mul(True, x)),
    "bool mask times False": lambda x, m: (m * False) | m,
    "bool mask plus True": lambda x, m: (m + True) & m,
    "fill a bool mask with True": lambda x, m: m.masked_fill(x > 0, True) | m,
    "fill with a keyword value": lambda x, m: m.masked_fill(x > 0, value=True) | m,
    "a mask equal to True": lambda x, m: (m == True) & (x > 0),  # noqa: E712
    "full of True": lambda x, m: torch.full((4,), True) & m,
    "where with True": lambda x, m: torch.where(m, x, True) * 2,
}


@pytest.mark.parametrize("in_pytorch", [set(), {"aten::mul", "aten::add", "aten::masked_fill", "aten::full",
                                                    "aten::eq", "aten::where"}], ids=["converted", "in_pytorch"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_bool_scalar_argument_compiles_and_keeps_eager_dtype(builds, case, in_pytorch):
    function, x = CASES[case], torch.tensor([0.5, -1.0, 2.0, -3.0])
    compiled = torch.compile(function, backend="tensorrt", options={**REFERENCE, "torch_executed_ops": in_pytorch})
    result, expected = compiled(x, MASK), function(x, MASK)
    assert result.dtype == expected.dtype and torch.equal(result, expected)
    assert engine_calls(builds) >= 1 and set(pytorch_ops(builds)) <= {"aten::to"} | in_pytorch


@pytest.mark.parametrize("method", ["__eq__", "__rmul__", "eq"])
def test_a_bool_scalar_of_a_dunder_method_is_made_a_number(method):
    """PyTorch 2.11's dynamo records `mask == True` as a call of the method __eq__, which names no aten op: the bool
    stayed, and the trace failed on the GPU machine."""
    graph = torch.fx.Graph()
    mask = graph.placeholder("mask")
    compared = graph.call_method(method, (mask, True))
    compared.meta["example_value"] = torch.ones(2, dtype=torch.bool)
    graph.output(compared)
    _bool_scalars_as_numbers(graph)
    assert compared.args == (mask, 1) and [user.target for user in compared.users] == ["to"]
