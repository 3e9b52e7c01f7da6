"""Copies along dims, each one ISliceLayer: expand, repeat/tile/repeat_interleave, flip and roll.

Stride 0 broadcasts (expand), SampleMode.WRAP tiles and rotates (repeat, roll), a negative stride reverses (flip);
only the sliced axes are named, so other dims may be dynamic. An expand to sizes known only at run time takes its
size (and, where a dynamic dim may be the 1 that grows, its stride) as shape tensors.
"""

import functools

from ..conversion import shape_tensors
from ..conversion.args import Arg
from ..conversion.registry import converter
from ._helpers import normalize_dim, rank, reshape_torch_sizes, slice_axes, unsqueeze, unsqueeze_to_rank
from .slicing import static_size


def expand_to(ctx, x, shape):
    """x broadcast to `shape` (-1 keeps a dim): a stride-0 slice over the dims that grow from 1."""
    if len(shape) < rank(x):
        raise ValueError(f"cannot expand a tensor of rank {rank(x)} to the shorter shape {shape}")
    x = unsqueeze_to_rank(ctx, x, len(shape))
    if any(shape_tensors.is_runtime(ctx, n) for n in shape) or any(old == -1 and new != -1 for old, new
                                                                    in zip(x.shape, shape)):
        return _expand_at_run_time(ctx, x, shape)
    grown = [d for d, (old, new) in enumerate(zip(x.shape, shape)) if new not in (-1, old)]
    for d in grown:
        if x.shape[d] != 1:
            raise ValueError(f"cannot expand dim {d} of size {x.shape[d]} to {shape[d]}: only size-1 dims grow")
    if not grown:
        return ctx.net.add_identity(x).get_output(0)
    return slice_axes(ctx, x, grown, [0] * len(grown), [shape[d] for d in grown], [0] * len(grown)).get_output(0)


def _expand_at_run_time(ctx, x, shape):
    """Expand to sizes known at run time, or of dims that are dynamic: a slice whose size (and, where a dynamic dim
    may be the 1 that grows, stride: 0 for size 1, else 1) are shape tensors."""
    sizes, strides = [], []
    for d, (old, new) in enumerate(zip(x.shape, shape)):
        if isinstance(new, int) and new == -1:
            sizes.append(shape_tensors.dim_size(ctx, x, d))
            strides.append(1)
        elif old == -1:
            size = shape_tensors.dim_size(ctx, x, d)
            one_less = shape_tensors.arithmetic(ctx, "SUB", size, 1)
            _require_expandable(ctx, size, new, d)
            sizes.append(new)
            strides.append(shape_tensors.arithmetic(ctx, "MIN", one_less, 1))
        else:
            sizes.append(old if old != 1 else new)
            strides.append(0 if old == 1 else 1)
    layer = ctx.net.add_slice(x, [0] * len(shape), [0] * len(shape), [1] * len(shape))
    layer.set_input(2, shape_tensors.shape_vector(ctx, sizes))
    layer.set_input(3, shape_tensors.shape_vector(ctx, strides))
    return layer.get_output(0)


def _require_expandable(ctx, size, new, dim):
    """Fail the run where dim `dim` of `size` cannot expand to `new`, as eager raises (a slice would read `new` of
    its rows): only a size of 1 grows. (size - new) * (size - 1) is 0 exactly when it is new or 1."""
    product = shape_tensors.arithmetic(ctx, "PROD", shape_tensors.arithmetic(ctx, "SUB", size, new),
                                       shape_tensors.arithmetic(ctx, "SUB", size, 1))
    shape_tensors.require(ctx, shape_tensors.arithmetic(ctx, "EQUAL", product, 0),
                          f"expand: the expanded size of dim {dim} must match its size unless that is 1")


@converter("aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)")
def expand(ctx, node, args):
    """Broadcast to size; -1 keeps the input's dim."""
    return ctx.set_output(node, [expand_to(ctx, args[0].itensor(), shape_tensors.int_list(ctx, args["size"]))])


@converter("aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)")
def expand_as(ctx, node, args):
    """Broadcast to other's shape (dynamic dims of other are read at run time)."""
    x, other = args[0].itensor(), args["other"].itensor()
    return ctx.set_output(node, [expand_to(ctx, x, shape_tensors.shape_of(ctx, other))])


def _tile(ctx, x, repeats):
    """x repeated `repeats[d]` times along each dim d (leading repeats add dims): slices in WRAP mode, of runtime sizes
    where a dim is dynamic or a count is read from sizes."""
    if len(repeats) < rank(x):
        raise ValueError(f"repeat needs at least one count per dim ({rank(x)}), got {repeats}")
    for count in repeats:
        shape_tensors.require(ctx, shape_tensors.at_least_zero(ctx, count), "repeat counts must be non-negative")
    x = unsqueeze_to_rank(ctx, x, len(repeats))
    axes = [d for d, count in enumerate(repeats) if shape_tensors.is_runtime(ctx, count) or count != 1]
    if not axes:
        return ctx.net.add_identity(x).get_output(0)
    sizes = [shape_tensors.arithmetic(ctx, "PROD", shape_tensors.dim_size(ctx, x, d), repeats[d]) for d in axes]
    return slice_axes(ctx, x, axes, [0] * len(axes), sizes, [1] * len(axes), ctx.trt.SampleMode.WRAP).get_output(0)


@converter("aten::repeat(Tensor self, SymInt[] repeats) -> Tensor")
def repeat(ctx, node, args):
    """Tile the whole tensor repeats[d] times along dim d."""
    return ctx.set_output(node, [_tile(ctx, args[0].itensor(), shape_tensors.int_list(ctx, args["repeats"]))])


@converter("aten::tile(Tensor self, SymInt[] dims) -> Tensor")
def tile(ctx, node, args):
    """repeat, with missing leading counts taken as 1."""
    x, dims = args[0].itensor(), shape_tensors.int_list(ctx, args["dims"])
    return ctx.set_output(node, [_tile(ctx, x, [1] * (rank(x) - len(dims)) + dims)])


@converter("aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) "
           "-> Tensor")
def repeat_interleave(ctx, node, args):
    """Each entry `repeats` times in a row along dim (of the flattened tensor when dim is None): a unit dim after dim,
    expanded to `repeats` and merged into dim."""
    x, repeats, dim = args[0].itensor(), args["repeats"].value, args["dim"].optional(Arg.to_int)
    product = functools.partial(shape_tensors.arithmetic, ctx, "PROD")
    if dim is None:
        x, dim = reshape_torch_sizes(ctx, x, [functools.reduce(product, shape_tensors.shape_of(ctx, x), 1)]), 0
    dim = normalize_dim(dim, rank(x))
    shape_tensors.require(ctx, shape_tensors.at_least_zero(ctx, repeats), "repeat_interleave: repeats must be >= 0")
    sizes = shape_tensors.shape_of(ctx, x)
    sizes[dim] = product(sizes[dim], repeats)
    if not args["output_size"].is_none():
        shape_tensors.require(ctx, shape_tensors.arithmetic(ctx, "EQUAL", args["output_size"].value, sizes[dim]),
                              "repeat_interleave: output_size must be the result's size along dim")
    grown = expand_to(ctx, unsqueeze(ctx, x, dim + 1), [-1] * (dim + 1) + [repeats] + [-1] * (rank(x) - dim - 1))
    return ctx.set_output(node, [reshape_torch_sizes(ctx, grown, sizes)])


@converter("aten::flip(Tensor self, int[] dims) -> Tensor")
def flip(ctx, node, args):
    """Reverse the order along each of dims: slices with stride -1."""
    x = args[0].itensor()
    dims = sorted({normalize_dim(d, rank(x)) for d in args["dims"].to_int_list()})
    if not dims:
        return ctx.set_output(node, ctx.net.add_identity(x))
    sizes = [static_size(x, d) for d in dims]
    return ctx.set_output(node, slice_axes(ctx, x, dims, [s - 1 for s in sizes], sizes, [-1] * len(dims)))


@converter("aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")
def roll(ctx, node, args):
    """Rotate by shifts[i] along dims[i] (no dims: along the flattened tensor, which must be static): slices in WRAP
    mode, of runtime starts and sizes where a dim is dynamic or a shift is read from sizes (swin's shifted windows)."""
    x, shifts, dims = args[0].itensor(), shape_tensors.int_list(ctx, args["shifts"]), args["dims"].to_int_list()
    if not dims:
        if len(shifts) != 1:
            raise ValueError(f"roll without dims takes one shift, got {shifts}")
        shape = [static_size(x, d) for d in range(rank(x))]
        flat = reshape_torch_sizes(ctx, x, [-1])
        size = static_size(flat, 0)
        start = (-shifts[0]) % max(size, 1)
        rolled = slice_axes(ctx, flat, (0,), (start,), (size,), (1,), ctx.trt.SampleMode.WRAP).get_output(0)
        return ctx.set_output(node, [reshape_torch_sizes(ctx, rolled, shape)])
    if len(shifts) != len(dims):
        raise ValueError(f"roll needs one shift per dim, got shifts {shifts} and dims {dims}")
    total = {}  # dim -> its shifts summed: PyTorch rolls a dim named twice by both
    for shift, dim in zip(shifts, dims):
        dim = normalize_dim(dim, rank(x))
        total[dim] = shape_tensors.arithmetic(ctx, "SUM", total.get(dim, 0), shift)
    dims = sorted(total)
    sizes = [shape_tensors.dim_size(ctx, x, d) for d in dims]
    starts = [shape_tensors.remainder(ctx, shape_tensors.arithmetic(ctx, "SUB", 0, total[d]),
                                      size if shape_tensors.is_runtime(ctx, size) else max(size, 1))
              for d, size in zip(dims, sizes)]
    return ctx.set_output(node, slice_axes(ctx, x, dims, starts, sizes, [1] * len(dims), ctx.trt.SampleMode.WRAP))
