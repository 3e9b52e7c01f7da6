"""Args: read by position or name; `get` for what only some overloads take; typed accessors that say what they want."""

import pytest
import torch

from torch_trt.conversion.args import Arg, ArgError, Args

RUNTIME_TENSOR = object()  # stands in for an ITensor


def _args(**values):
    return Args(None, [Arg(None, name, value, value is RUNTIME_TENSOR) for name, value in values.items()])


def test_get_reads_an_argument_the_overload_has():
    args = _args(dim=[1, 2], keepdim=True)
    assert args.get("dim", []).to_int_list() == [1, 2] and args.get("keepdim", False).to_bool() is True


@pytest.mark.parametrize("values", [{}, {"dim": None}], ids=["absent", "None"])
def test_get_gives_the_default_when_the_overload_lacks_the_argument_or_it_is_none(values):
    args = _args(**values)
    assert args.get("dim", [0]).to_int_list() == [0] and args.get("dim").is_none()
    assert args.get("dim").optional(Arg.to_int) is None


def test_in_asks_for_an_argument_name():
    args = _args(self=RUNTIME_TENSOR, unbiased=None)
    assert "unbiased" in args and "correction" not in args


@pytest.mark.parametrize("value", [RUNTIME_TENSOR, torch.ones(2), 3, 2.5, True],
                         ids=["runtime tensor", "constant tensor", "int", "float", "bool"])
def test_an_operand_is_a_tensor_or_a_number(value):
    assert _args(other=value)["other"].operand() is value


@pytest.mark.parametrize("value", [[1, 2], "floor", None])
def test_anything_else_is_no_operand(value):
    with pytest.raises(ArgError, match="argument 'other' must be a tensor or a number"):
        _args(other=value)["other"].operand()


def test_lists():
    args = _args(tensors=(RUNTIME_TENSOR, torch.ones(1)), scale_factors=[2, 1.5], dim=1)
    assert args["tensors"].to_list() == [RUNTIME_TENSOR, args["tensors"].value[1]]
    assert args["scale_factors"].to_float_list() == [2.0, 1.5]
    with pytest.raises(ArgError, match="argument 'dim' must be a list"):
        args["dim"].to_list()
