"""Indexing and data movement converters: gather, index, split/chunk/unbind, pixel (un)shuffle, masked_fill, where
and scatter (copies along dims, expand to roll, are slice_copies.py's).

Ops returning Tensor[] give a list of ITensors (see _set_list_output). TensorRT's gather and scatter take no
negative indices: index's are wrapped in the network, which is what PyTorch allows there.
"""

import functools

import torch

from ..conversion import shape_tensors
from ..conversion.registry import converter
from ._helpers import (cast, choose, dtype_of, elementwise, normalize_dim, promote_types, rank, reshape_torch_sizes,
                       slice_axes, unsqueeze, unsqueeze_to_rank)
from .slice_copies import expand_to
from .slicing import entry, static_size


def _transpose(ctx, x, order):
    layer = ctx.net.add_shuffle(x)
    layer.first_transpose = tuple(order)
    return layer.get_output(0)


def _set_list_output(ctx, node, tensors):
    """Record the node's Tensor[] output: prim::ListUnpack and __getitem__ hand its ITensors out as tensors."""
    ctx.evaluated_value_map[node.output()] = list(tensors)
    return list(tensors)


def _pieces(ctx, x, dim, sizes):
    """Consecutive slices of `sizes` along dim."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [slice_axes(ctx, x, (dim,), (start,), (size,), (1,)).get_output(0) for start, size in zip(starts, sizes)]


def _split_sizes(size, split_size):
    """PyTorch's split: pieces of split_size, the last one smaller."""
    if split_size <= 0:
        raise ValueError(f"split size must be positive, got {split_size}")
    return [min(split_size, size - start) for start in range(0, size, split_size)] or [0]


@converter("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
@converter("aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]")
def split(ctx, node, args):
    """Pieces of split_size along dim."""
    x = args[0].itensor()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    return _set_list_output(ctx, node, _pieces(ctx, x, dim, _split_sizes(static_size(x, dim), args[1].to_int())))


@converter("aten::split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]")
@converter("aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]")
@converter("aten::unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]")
def split_with_sizes(ctx, node, args):
    """Pieces of the given sizes along dim (they must add up to the dim's size)."""
    x, sizes = args[0].itensor(), args[1].to_int_list()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    if sum(sizes) != static_size(x, dim) or min(sizes) < 0:
        raise ValueError(f"split sizes {sizes} must be non-negative and add up to dim {dim}'s size {x.shape[dim]}")
    return _set_list_output(ctx, node, _pieces(ctx, x, dim, sizes))


@converter("aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]")
@converter("aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]")
def chunk(ctx, node, args):
    """`chunks` pieces of ceil(size / chunks) along dim (fewer when they run out, as in PyTorch)."""
    x, chunks = args[0].itensor(), args["chunks"].to_int()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    if chunks <= 0:
        raise ValueError(f"chunk needs a positive number of chunks, got {chunks}")
    size = static_size(x, dim)
    return _set_list_output(ctx, node, _pieces(ctx, x, dim, _split_sizes(size, max(-(-size // chunks), 1))))


@converter("aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
def unbind(ctx, node, args):
    """Each entry along dim, that dim removed."""
    x = args[0].itensor()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    tensors = [entry(ctx, x, dim, i) for i in range(static_size(x, dim))]
    return _set_list_output(ctx, node, tensors)


@converter("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor")
def gather(ctx, node, args):
    """out[i][j] = self[index[i][j]][j] (for dim 0): TensorRT's ELEMENT gather."""
    x, index = args[0].itensor(), args["index"].itensor()
    if rank(index) != rank(x):
        raise ValueError(f"gather index of rank {rank(index)} must have the rank of the input ({rank(x)})")
    layer = ctx.net.add_gather_v2(x, index, ctx.trt.GatherMode.ELEMENT)
    layer.axis = normalize_dim(args["dim"].to_int(), rank(x))
    return ctx.set_output(node, layer)


def _wrapped(ctx, index, size):
    """A runtime index with negative entries counted from the end (PyTorch's indexing; TensorRT reads [0, size))."""
    ops = ctx.trt.ElementWiseOperation
    negative = elementwise(ctx, index, 0, ops.LESS)
    return ctx.net.add_select(negative, elementwise(ctx, index, size, ops.SUM), index).get_output(0)


def _index_tensor(ctx, arg, x, dim):
    """One index of aten::index into `dim` of x as an integer ITensor with entries in [0, size), the size read at run
    time for a dynamic dim."""
    dtype = dtype_of(ctx, arg) if isinstance(arg, ctx.trt.ITensor) else arg.dtype
    if dtype not in (torch.int32, torch.int64):
        raise NotImplementedError(f"indexing with a {dtype} tensor (a mask gives a data-dependent shape)")
    size = shape_tensors.dim_size(ctx, x, dim)
    if isinstance(arg, ctx.trt.ITensor):
        return _wrapped(ctx, arg, size)
    if not shape_tensors.is_runtime(ctx, size):
        return ctx.constant(torch.where(arg < 0, arg + size, arg))
    return _wrapped(ctx, ctx.constant(arg), size) if (arg < 0).any() else ctx.constant(arg)


def _with_coordinate_axis(ctx, tensor):
    """`tensor` with a unit dim appended (the coordinate axis of a GatherND index)."""
    return unsqueeze(ctx, tensor, rank(tensor))


def _broadcast_shape(ctx, tensors):
    """The shape the tensors broadcast to: per dim, the static size other than 1, else the runtime size of the
    dynamic dims there (their maximum, since any other is 1), else 1."""
    target = max(map(rank, tensors))
    tensors = [unsqueeze_to_rank(ctx, t, target) for t in tensors]
    shape = []
    for dim in range(target):
        sizes = [t.shape[dim] for t in tensors]
        static = {size for size in sizes if size not in (1, -1)}
        if len(static) > 1:
            raise ValueError(f"index tensors of shapes {[tuple(t.shape) for t in tensors]} do not broadcast")
        if static or -1 not in sizes:
            shape.append(static.pop() if static else 1)
            continue
        dynamic = [shape_tensors.dim_size(ctx, t, dim) for t in tensors if t.shape[dim] == -1]
        shape.append(functools.reduce(lambda a, b: shape_tensors.arithmetic(ctx, "MAX", a, b), dynamic))
    return shape


@converter("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")
def index(ctx, node, args):
    """x[..., idx, ...] with integer index tensors: one gather for one index, a GatherND for several (broadcast together)."""
    x, given = args[0].itensor(), list(args["indices"].value)
    dims = [d for d, i in enumerate(given) if i is not None]
    if not dims:
        return ctx.set_output(node, ctx.net.add_identity(x))
    indices = [_index_tensor(ctx, given[d], x, d) for d in dims]
    if len(dims) == 1:
        return ctx.set_output(node, ctx.net.add_gather(x, indices[0], dims[0]))
    shape = _broadcast_shape(ctx, indices)  # PyTorch broadcasts the index tensors together
    dtype = promote_types(ctx, *indices)
    stacked = ctx.net.add_concatenation([_with_coordinate_axis(ctx, expand_to(ctx, cast(ctx, i, dtype), shape))
                                         for i in indices])
    stacked.axis = len(shape)
    rest = [d for d in range(rank(x)) if d not in dims]
    front = _transpose(ctx, x, dims + rest)  # the indexed dims first: GatherND reads leading dims
    gathered = ctx.net.add_gather_v2(front, stacked.get_output(0), ctx.trt.GatherMode.ND).get_output(0)
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    if not adjacent or dims[0] == 0:  # PyTorch puts the index dims first unless the indexed dims are adjacent
        return ctx.set_output(node, [gathered])
    index_rank = len(shape)
    order = list(range(index_rank, index_rank + dims[0])) + list(range(index_rank)) + \
        list(range(index_rank + dims[0], rank(gathered)))
    return ctx.set_output(node, [_transpose(ctx, gathered, order)])


def _pixel_sizes(x):
    """(channels, height, width) of a pixel (un)shuffle input, which must be static: checked before their
    divisibility, which a dynamic size (-1) would fail with a misleading message."""
    if rank(x) < 3:
        raise ValueError(f"pixel (un)shuffle needs an input of rank >= 3, got rank {rank(x)}")
    if -1 in x.shape[-3:]:
        raise NotImplementedError(f"pixel (un)shuffle of {tuple(x.shape)}: channels, height and width must be "
                                  "static")
    return tuple(x.shape[-3:])


def _shuffle_pixels(ctx, x, split, order, merged):
    """Reshape the last three dims to `split`, permute them by `order`, reshape them to `merged`."""
    lead = list(x.shape[:-3])
    parts = reshape_torch_sizes(ctx, x, lead + split, copied=len(lead))
    permuted = _transpose(ctx, parts, list(range(len(lead))) + [len(lead) + d for d in order])
    return reshape_torch_sizes(ctx, permuted, lead + merged, copied=len(lead))


@converter("aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor")
def pixel_shuffle(ctx, node, args):
    """[*, C*r*r, H, W] -> [*, C, H*r, W*r]."""
    x, r = args[0].itensor(), args["upscale_factor"].to_int()
    channels, height, width = _pixel_sizes(x)
    if r <= 0 or channels % (r * r):
        raise ValueError(f"pixel_shuffle needs channels ({channels}) divisible by upscale_factor² ({r}²)")
    c = channels // (r * r)
    return ctx.set_output(node, [_shuffle_pixels(ctx, x, [c, r, r, height, width], [0, 3, 1, 4, 2],
                                                 [c, height * r, width * r])])


@converter("aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor")
def pixel_unshuffle(ctx, node, args):
    """[*, C, H*r, W*r] -> [*, C*r*r, H, W]."""
    x, r = args[0].itensor(), args["downscale_factor"].to_int()
    channels, height, width = _pixel_sizes(x)
    if r <= 0 or height % r or width % r:
        raise ValueError(f"pixel_unshuffle needs height ({height}) and width ({width}) divisible by {r}")
    h, w = height // r, width // r
    return ctx.set_output(node, [_shuffle_pixels(ctx, x, [channels, h, r, w, r], [0, 2, 4, 1, 3],
                                                 [channels * r * r, h, w])])


@converter("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor")
@converter("aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor")
@converter("aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor")
@converter("aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor")
def where(ctx, node, args):
    """self where condition, else other, in their promoted dtype."""
    then_value, else_value = args["self"].value, args["other"].value
    dtype = promote_types(ctx, then_value, else_value)
    return ctx.set_output(node, [choose(ctx, args["condition"].itensor(), then_value, else_value, dtype)])


@converter("aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor")
@converter("aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor")
def masked_fill(ctx, node, args):
    """value where mask, else self, in self's dtype (a Tensor value must be 0-D)."""
    x, value = args[0].itensor(), args["value"].value
    value_rank = rank(value) if isinstance(value, ctx.trt.ITensor) else getattr(value, "ndim", 0)
    if value_rank:
        raise ValueError(f"masked_fill takes a 0-D value tensor, got one of rank {value_rank}")
    return ctx.set_output(node, [choose(ctx, args["mask"].itensor(), value, x, dtype_of(ctx, x))])


def _scatter(ctx, node, x, dim, index, updates):
    """ELEMENT scatter of updates (index's shape, x's dtype) into x at index along dim."""
    if rank(index) != rank(x):
        raise ValueError(f"scatter index of rank {rank(index)} must have the rank of the input ({rank(x)})")
    layer = ctx.net.add_scatter(x, cast(ctx, index, torch.int32), cast(ctx, updates, dtype_of(ctx, x)),
                                ctx.trt.ScatterMode.ELEMENT)
    layer.axis = dim
    return ctx.set_output(node, layer)


def _static_shape(tensor, what):
    shape = tuple(tensor.shape)
    if -1 in shape:
        raise NotImplementedError(f"{what} of dynamic shape {shape}")
    return shape


@converter("aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
def scatter_src(ctx, node, args):
    """self with src's entries written at index along dim (src is read over index's shape, as PyTorch does)."""
    x, index, src = args[0].itensor(), args["index"].itensor(), args["src"].itensor()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    shape = _static_shape(index, "scatter index")
    if tuple(src.shape) != shape:
        src = slice_axes(ctx, src, range(len(shape)), [0] * len(shape), shape, [1] * len(shape)).get_output(0)
    return _scatter(ctx, node, x, dim, index, src)


@converter("aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor")
def scatter_value(ctx, node, args):
    """self with value written at index along dim."""
    x, index = args[0].itensor(), args["index"].itensor()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    updates = ctx.constant(torch.full(_static_shape(index, "scatter index"), args["value"].value,
                                      dtype=dtype_of(ctx, x)))
    return _scatter(ctx, node, x, dim, index, updates)
