"""Slicing converters: select, slice and narrow along one dim (ISliceLayer / IGatherLayer), index_select and
embedding (gather).

Slices name only the sliced axis (`ISliceLayer.axes`), so the other dims may be dynamic; bounds follow
PyTorch (negative positions count from the end, out-of-range ends are clamped). When the sliced dim is
dynamic or a bound is a runtime int, the bounds are computed in the engine and the slice takes its start
and size as shape tensors. Every bound on a dynamic dim is clamped to it (x[:, :y.size(1)] with y the wider,
XLNet's mems[-512:] of a shorter sequence). Where the clamp makes a dim static at the reference's probe sizes, which
exceed it (x[:, :4] reads 4 wide), while the profile holds shorter dims, the reference's builder refuses the layer
if another layer reads it (it then runs in PyTorch), and an engine output takes its size when the engine runs. A
runtime bound on a static dim is not clamped (position_ids[:, :seq_len] would read as 512 wide): such a slice must
lie within the dim, and one that does not fails when the engine runs (STRICT_BOUNDS), never gives a wrong result.
TensorRT's gather takes INT32/INT64 indices in [0, size), which is also all that index_select and embedding accept,
so their indices pass through unchanged.
"""

import torch

from ..conversion.registry import converter
from ..conversion.shape_tensors import (arithmetic, at_least_zero, dim_size, is_runtime, require, shape_vector,
                                        wrap_negative)
from ._helpers import drop_unit_dims, normalize_dim, rank, reshape_torch_sizes

_TO_END = 2 ** 63 - 1  # TorchScript's `end` for `x[a:]`


def static_size(x, dim):
    """The size of dim, which must be static."""
    size = x.shape[dim]
    if size == -1:
        raise NotImplementedError(f"indexing dim {dim} of dynamic size in {tuple(x.shape)}")
    return size


def _slice(ctx, node, x, dim, start, length, step=1):
    """Elements start, start + step, ... (`length` of them) along `dim`; start and length may be runtime ints."""
    layer = ctx.net.add_slice(x, (0 if is_runtime(ctx, start) else start,),
                              (0 if is_runtime(ctx, length) else length,), (step,))
    layer.axes = (dim,)
    for index, value in ((1, start), (2, length)):
        if is_runtime(ctx, value):
            layer.set_input(index, shape_vector(ctx, [value]))
    return ctx.set_output(node, layer)


def _position(arg):
    """A bound argument: None, an int, or a runtime int."""
    return None if arg.is_none() else arg.value


@converter("aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
           "-> Tensor(a)")
def slice(ctx, node, args):
    """self[start:end:step] along dim."""
    x = args[0].itensor()
    dim, step = normalize_dim(args["dim"].to_int(), rank(x)), args["step"].to_int()
    start, end = _position(args["start"]), _position(args["end"])
    if step < 1:
        raise ValueError(f"slice step must be positive, got {step}")
    if start in (None, 0) and end in (None, _TO_END) and step == 1:
        return ctx.set_output(node, ctx.net.add_identity(x))  # the whole dim, even a dynamic one
    size = dim_size(ctx, x, dim)
    if end is None or not is_runtime(ctx, end) and end == _TO_END:
        end = size
    start = 0 if start is None else start
    clamped = [is_runtime(ctx, size) and v is not size and (is_runtime(ctx, v) or v != 0) for v in (start, end)]
    start, end = (wrap_negative(ctx, v, size) for v in (start, end))
    if not any(is_runtime(ctx, v) for v in (start, end, size)):  # PyTorch clamps out-of-range bounds
        start, end = (min(max(v, 0), size) for v in (start, end))
    start, end = (arithmetic(ctx, "MIN", arithmetic(ctx, "MAX", v, 0), size) if clamp else v
                  for v, clamp in zip((start, end), clamped))
    span = arithmetic(ctx, "SUM", arithmetic(ctx, "SUB", end, start), step - 1)  # ceil((end - start) / step)
    length = arithmetic(ctx, "MAX", 0, arithmetic(ctx, "FLOOR_DIV", span, step))
    return _slice(ctx, node, x, dim, start, length, step)


@converter("aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
def narrow(ctx, node, args):
    """`length` elements from `start` along dim."""
    x = args[0].itensor()
    dim, start, length = normalize_dim(args["dim"].to_int(), rank(x)), args["start"].value, args["length"].value
    size = dim_size(ctx, x, dim)
    start = wrap_negative(ctx, start, size)
    if not any(is_runtime(ctx, v) for v in (start, length, size)) and \
            not (0 <= start and 0 <= length and start + length <= size):
        raise IndexError(f"narrow of {length} from {start} is out of range for dim {dim} of size {size}")
    room = arithmetic(ctx, "SUB", size, arithmetic(ctx, "SUM", start, length))
    require(ctx, at_least_zero(ctx, arithmetic(ctx, "MIN", arithmetic(ctx, "MIN", start, length), room)),
            f"narrow: the start and length must lie in dim {dim}")
    return _slice(ctx, node, x, dim, start, length)


def entry(ctx, x, dim, index):
    """x[..., index, ...] at dim, that dim removed, for an index known to lie in it: a slice and a shuffle, which
    only view x (a gather would read through an index tensor, checked on every call)."""
    layer = ctx.net.add_slice(x, (index,), (1,), (1,))
    layer.axes = (dim,)
    return drop_unit_dims(ctx, layer.get_output(0), [dim])


@converter("aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
def select(ctx, node, args):
    """self[..., index, ...] at dim (that dim is removed); a gather with a 0-D index when the index is known only at
    run time, or is negative on a dynamic dim."""
    x = args[0].itensor()
    dim, index = normalize_dim(args["dim"].to_int(), rank(x)), args["index"].value
    size = dim_size(ctx, x, dim)
    if not is_runtime(ctx, index) and not is_runtime(ctx, size) and not -size <= index < size:
        raise IndexError(f"select index {index} is out of range for dim {dim} of size {size}")
    index = wrap_negative(ctx, index, size)
    if not is_runtime(ctx, index) and not is_runtime(ctx, size):
        return ctx.set_output(node, entry(ctx, x, dim, index))
    indices = index if is_runtime(ctx, index) else ctx.constant(torch.tensor(index, dtype=torch.int32))
    return ctx.set_output(node, ctx.net.add_gather(x, indices, dim))


@converter("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor")
def index_select(ctx, node, args):
    """The entries of self at `index` along dim (a 0-D index acts as a 1-element one: the dim stays)."""
    x, index = args[0].itensor(), args["index"].itensor()
    index = reshape_torch_sizes(ctx, index, [1]) if rank(index) == 0 else index
    return ctx.set_output(node, ctx.net.add_gather(x, index, normalize_dim(args["dim"].to_int(), rank(x))))


@converter("aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
           "bool sparse=False) -> Tensor")
def embedding(ctx, node, args):
    """Rows of weight at indices (padding_idx only matters for training)."""
    return ctx.set_output(node, ctx.net.add_gather(args["weight"].itensor(), args["indices"].itensor(), 0))
