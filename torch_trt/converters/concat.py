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


def _promoted(ctx, values, kept=None):
    """The list's items (those `kept`, when given) as ITensors of the dtype all of them promote to."""
    dtype = promote_types(ctx, *values)
    return [to_itensor(ctx, value, dtype) for value in (values if kept is None else kept)]


def _is_legacy_empty(value):
    """A 1-D tensor of shape (0,): torch.cat skips these whatever the other inputs' rank (e.g. an empty KV cache)."""
    return tuple(value.shape) == (0,)


@converter("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
def cat(ctx, node, args):
    """Join the tensors along dim; a skipped legacy empty tensor still takes part in the dtype promotion."""
    values = args["tensors"].to_list()
    tensors = _promoted(ctx, values, [v for v in values if not _is_legacy_empty(v)] or values[:1])
    return _concatenate(ctx, node, tensors, normalize_dim(args["dim"].to_int(), rank(tensors[0])))


@converter("aten::stack(Tensor[] tensors, int dim=0) -> Tensor")
def stack(ctx, node, args):
    """Join the tensors along a new dim: unsqueeze each, then concatenate."""
    tensors = _promoted(ctx, args["tensors"].to_list())
    dim = normalize_dim(args["dim"].to_int(), rank(tensors[0]) + 1)
    return _concatenate(ctx, node, [unsqueeze(ctx, t, dim) for t in tensors], dim)
