"""Indexing converters: select, slice and narrow (ISliceLayer / IGatherLayer), index_select and embedding (gather).

Slices name only the sliced axis (`ISliceLayer.axes`), so the other dims may be dynamic; bounds follow
PyTorch (negative positions count from the end, out-of-range ends are clamped) and need the sliced dim's
size at build time. TensorRT's gather takes INT32/INT64 indices in [0, size), which is also all that
index_select and embedding accept, so their indices pass through unchanged.
"""

import torch

from ..conversion.args import Arg
from ..conversion.registry import converter
from ._helpers import normalize_dim, rank, reshape_to

_TO_END = 2 ** 63 - 1  # TorchScript's `end` for `x[a:]`


def static_size(x, dim):
    """The size of dim, which must be static."""
    size = x.shape[dim]
    if size == -1:
        raise NotImplementedError(f"indexing dim {dim} of dynamic size in {tuple(x.shape)}")
    return size


def _slice(ctx, node, x, dim, start, length, step=1):
    """Elements start, start + step, ... (`length` of them) along `dim`."""
    layer = ctx.net.add_slice(x, (start,), (length,), (step,))
    layer.axes = (dim,)
    return ctx.set_output(node, layer)


@converter("aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
           "-> Tensor(a)")
def slice(ctx, node, args):
    """self[start:end:step] along dim."""
    x = args[0].itensor()
    dim, step = normalize_dim(args["dim"].to_int(), rank(x)), args["step"].to_int()
    start, end = (args[name].optional(Arg.to_int) for name in ("start", "end"))
    if step < 1:
        raise ValueError(f"slice step must be positive, got {step}")
    if start in (None, 0) and end in (None, _TO_END) and step == 1:
        return ctx.set_output(node, ctx.net.add_identity(x))  # the whole dim, even a dynamic one
    size = static_size(x, dim)
    start, end = (min(max(v + size if v < 0 else v, 0), size) for v in (start or 0, size if end is None else end))
    return _slice(ctx, node, x, dim, start, max(0, -(-(end - start) // step)), step)


@converter("aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
def narrow(ctx, node, args):
    """`length` elements from `start` along dim."""
    x = args[0].itensor()
    dim, start, length = normalize_dim(args["dim"].to_int(), rank(x)), args["start"].to_int(), args["length"].to_int()
    size = static_size(x, dim)
    start = start + size if start < 0 else start
    if not (0 <= start and 0 <= length and start + length <= size):
        raise IndexError(f"narrow of {length} from {start} is out of range for dim {dim} of size {size}")
    return _slice(ctx, node, x, dim, start, length)


@converter("aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
def select(ctx, node, args):
    """self[..., index, ...] at dim (that dim is removed): a gather with a 0-D INT32 index."""
    x = args[0].itensor()
    dim, index = normalize_dim(args["dim"].to_int(), rank(x)), args["index"].to_int()
    if index < 0:
        index += static_size(x, dim)
    if not 0 <= index < x.shape[dim] and x.shape[dim] != -1:
        raise IndexError(f"select index {args['index'].value} is out of range for dim {dim} of size {x.shape[dim]}")
    indices = ctx.constant(torch.tensor(index, dtype=torch.int32))
    return ctx.set_output(node, ctx.net.add_gather(x, indices, dim))


@converter("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor")
def index_select(ctx, node, args):
    """The entries of self at `index` along dim (a 0-D index acts as a 1-element one: the dim stays)."""
    x, index = args[0].itensor(), args["index"].itensor()
    index = reshape_to(ctx, index, [1]) if rank(index) == 0 else index
    return ctx.set_output(node, ctx.net.add_gather(x, index, normalize_dim(args["dim"].to_int(), rank(x))))


@converter("aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
           "bool sparse=False) -> Tensor")
def embedding(ctx, node, args):
    """Rows of weight at indices (padding_idx only matters for training)."""
    return ctx.set_output(node, ctx.net.add_gather(args["weight"].itensor(), args["indices"].itensor(), 0))
