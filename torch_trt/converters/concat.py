"""Concatenation converters: cat and stack, one IConcatenationLayer each.

The Tensor[] argument is a list of ITensors and compile-time tensors; constants become network
constants and every input is cast to PyTorch's promoted dtype (TensorRT needs one dtype).
"""

from ..conversion.registry import converter
from ._helpers import normalize_dim, promote_types, rank, to_itensor, unsqueeze


def _concatenate(ctx, node, tensors, axis):
    layer = ctx.net.add_concatenation(tensors)
    layer.axis = axis
    return ctx.set_output(node, layer)


def _promoted(ctx, values):
    """The list's items as ITensors of their promoted dtype."""
    dtype = promote_types(ctx, *values)
    return [to_itensor(ctx, value, dtype) for value in values]


@converter("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
def cat(ctx, node, args):
    """Join the tensors along dim."""
    tensors = _promoted(ctx, args["tensors"].value)
    return _concatenate(ctx, node, tensors, normalize_dim(args["dim"].to_int(), rank(tensors[0])))


@converter("aten::stack(Tensor[] tensors, int dim=0) -> Tensor")
def stack(ctx, node, args):
    """Join the tensors along a new dim: unsqueeze each, then concatenate."""
    tensors = _promoted(ctx, args["tensors"].value)
    dim = normalize_dim(args["dim"].to_int(), rank(tensors[0]) + 1)
    return _concatenate(ctx, node, [unsqueeze(ctx, t, dim) for t in tensors], dim)
