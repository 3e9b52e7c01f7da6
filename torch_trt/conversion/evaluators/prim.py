"""Evaluators for prim:: nodes: constants, lists and tuples, scalar <-> tensor."""

import functools

import torch

from ...targets.dtypes import SCALAR_TYPE_CODES, torch_dtype
from ..registry import evaluator
from ..shape_tensors import arithmetic


@evaluator("prim::Constant")
def constant(ctx, node, args):
    """The constant's value (tensor, number, list, string, device, None)."""
    return node.output().toIValue()


@evaluator("prim::ListConstruct")
def list_construct(ctx, node, args):
    """A Python list of the elements (ITensors stay ITensors, for converters taking Tensor[])."""
    return [arg.value for arg in args]


@evaluator("prim::TupleConstruct")
def tuple_construct(ctx, node, args):
    return tuple(arg.value for arg in args)


@evaluator("prim::ListUnpack")
def list_unpack(ctx, node, args):
    values = list(args[0].value)
    if len(values) != node.outputsSize():
        raise ValueError(f"cannot unpack {len(values)} values into {node.outputsSize()} outputs")
    return values[0] if len(values) == 1 else values  # a node of one output evaluates to that value itself


evaluator("prim::TupleUnpack")(list_unpack)


@evaluator("prim::TupleIndex")
def tuple_index(ctx, node, args):
    return args[0].value[args[1].to_int()]


@evaluator("prim::NumToTensor")
def num_to_tensor(ctx, node, args):
    """A 0-D tensor of the number; a runtime int is one already (a 0-D INT64 tensor, as NumToTensor of an int)."""
    return args[0].value if args[0].is_itensor() else torch.tensor(args[0].value)


@evaluator("prim::dtype")
def dtype(ctx, node, args):
    """The ScalarType code of a tensor's dtype, as TorchScript represents it."""
    value = args[0].value
    return SCALAR_TYPE_CODES[value.dtype if isinstance(value, torch.Tensor) else torch_dtype(ctx.trt, value.dtype)]


def _extremum(ctx, args, operation):
    """The MIN or MAX of a list's elements or of two values: numbers, or runtime ints computed in the engine."""
    values = list(args[0].value) if len(args) == 1 else [args[0].value, args[1].value]
    return functools.reduce(lambda a, b: arithmetic(ctx, operation, a, b), values)


@evaluator("prim::min")
def minimum(ctx, node, args):
    return _extremum(ctx, args, "MIN")


@evaluator("prim::max")
def maximum(ctx, node, args):
    return _extremum(ctx, args, "MAX")
