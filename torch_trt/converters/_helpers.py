"""Helpers shared by converter families: constants, dtype promotion, broadcasting, dims and axes."""

import logging

import torch

from ..conversion.shape_tensors import arithmetic, as_int64, is_runtime, reshape_to_shape_tensor, shape_vector
from ..targets.dtypes import HALF_DTYPES, torch_dtype, trt_dtype

logger = logging.getLogger(__name__)


def rank(tensor):
    return len(tensor.shape)


def normalize_dim(dim, rank_):
    """A dim in [0, rank) from a possibly negative PyTorch dim; IndexError when out of range."""
    if not -rank_ <= dim < max(rank_, 1):
        raise IndexError(f"dim {dim} is out of range for a tensor of rank {rank_}")
    return dim % max(rank_, 1)


def axes_mask(dims, rank_):
    """TensorRT's axes bitmask (bit i = dim i) for PyTorch dims, negative dims allowed."""
    mask = 0
    for dim in dims:
        mask |= 1 << normalize_dim(dim, rank_)
    return mask


def dtype_of(ctx, value):
    """The torch dtype of an ITensor or of a compile-time value."""
    if isinstance(value, ctx.trt.ITensor):
        return torch_dtype(ctx.trt, value.dtype)
    return torch.as_tensor(value).dtype


def _promotion_stand_in(ctx, value):
    """Something torch.result_type treats as `value` does: dimensioned tensors vs 0-d tensors vs numbers (a runtime
    int, such as a dynamic size, is a number, as in PyTorch)."""
    if isinstance(value, ctx.trt.ITensor) and id(value) in ctx.runtime_scalars:
        return ctx.runtime_scalars[id(value)]()
    if isinstance(value, ctx.trt.ITensor):
        return torch.empty((1,) * max(rank(value), 1) if rank(value) else (), dtype=dtype_of(ctx, value))
    return value


_KINDS = (bool, int, float, complex)  # Python scalars' kinds, in the order PyTorch promotes them


def promote_types(ctx, *values):
    """PyTorch's result dtype for an op on ITensors, tensors and Python scalars: dimensioned tensors decide, then 0-d
    tensors, then scalars, a later category changing the dtype only when it is of a higher kind (int < float)."""
    stand_ins = [_promotion_stand_in(ctx, v) for v in values]
    tensors = [s for s in stand_ins if isinstance(s, torch.Tensor)]
    categories = [[t.dtype for t in tensors if t.dim()], [t.dtype for t in tensors if not t.dim()]]
    representatives = [torch.empty((1,) if index == 0 else (), dtype=_promoted(dtypes))
                       for index, dtypes in enumerate(categories) if dtypes]
    scalars = [s for s in stand_ins if not isinstance(s, torch.Tensor)]
    if scalars:
        representatives.append(max(scalars, key=lambda scalar: _KINDS.index(type(scalar))))
    result = representatives[0]
    for other in representatives[1:]:  # each category once: the fold keeps the first's dims
        result = torch.empty(getattr(result, "shape", ()), dtype=torch.result_type(result, other))
    return result.dtype if isinstance(result, torch.Tensor) else torch.result_type(result, result)


def _promoted(dtypes):
    """The dtype tensors of `dtypes` promote to, among themselves."""
    result = dtypes[0]
    for dtype in dtypes[1:]:
        result = torch.promote_types(result, dtype)
    return result


def compute_dtype(ctx, dtype, candidates=HALF_DTYPES):
    """The dtype a compute-heavy op (convolution, matmul) runs in: float32 drops to float16 or bfloat16 when
    enabled_precisions allows it (the output is cast back, so precision-sensitive ops stay in float32)."""
    if dtype == torch.float32:
        for reduced in candidates:
            if reduced in ctx.settings.enabled_precisions:
                return reduced
    return dtype


def reduced_weights(ctx, weights, dtype):
    """Compile-time float32 `weights` in the `dtype` that compute_dtype chose. Into float16 they convert as TensorRT
    converts weights to FP16, with a warning naming the node: finite values past its range clamp to its largest,
    nonzero values below its smallest subnormal become that subnormal (with their sign), where a plain cast would
    give inf and 0. bfloat16 holds float32's range."""
    if dtype != torch.float16 or weights.dtype != torch.float32:
        return weights.to(dtype)
    info = torch.finfo(dtype)
    smallest = info.smallest_normal * info.eps  # the smallest subnormal, 2 ** -24
    magnitude = weights.abs()
    too_large = magnitude.isfinite() & (magnitude > info.max)
    too_small = (magnitude > 0) & (magnitude < smallest)
    if too_large.any() or too_small.any():
        logger.warning("%s -> %%%s: enabled_precisions runs it in float16, and of its float32 weights %d exceed "
                       "float16's range (clamped to +-%g) and %d nonzero ones lie below its smallest subnormal (raised "
                       "to +-%.3g), as TensorRT converts weights to FP16: its results may be far from float32's. "
                       "Rescale those weights, or leave torch.float16 out of enabled_precisions.", ctx.node.kind(),
                       ctx.node.outputsAt(0).debugName(), int(too_large.sum()), info.max, int(too_small.sum()),
                       smallest)
    weights = torch.where(too_large, weights.sign() * info.max, weights)
    return torch.where(too_small, weights.sign() * smallest, weights).to(dtype)


def cast(ctx, tensor, dtype):
    """`tensor` as `dtype` (torch dtype), adding a cast layer only when needed."""
    if dtype_of(ctx, tensor) == dtype:
        return tensor
    return ctx.net.add_cast(tensor, trt_dtype(ctx.trt, dtype)).get_output(0)


def as_float(ctx, tensor):
    """`tensor`, cast to float32 when it is not a float tensor (PyTorch promotes integers and bools so for float
    ops)."""
    return tensor if dtype_of(ctx, tensor).is_floating_point else cast(ctx, tensor, torch.float32)


def cast_rounded(ctx, tensor, dtype):
    """A float result that holds integers (an integer op computed in float32) as `dtype`: rounded first when
    `dtype` is an integer type, since a GPU's float math can land just below an integer (24.99998 for 5 ** 2),
    which a cast truncates."""
    if dtype.is_floating_point or dtype == torch.bool:
        return cast(ctx, tensor, dtype)
    return cast(ctx, ctx.net.add_unary(tensor, ctx.trt.UnaryOperation.ROUND).get_output(0), dtype)


def to_itensor(ctx, value, dtype):
    """An ITensor of `dtype` for an ITensor, tensor constant or Python scalar."""
    if isinstance(value, ctx.trt.ITensor):
        return cast(ctx, value, dtype)
    return ctx.constant(torch.as_tensor(value).to(dtype))


def slice_axes(ctx, x, axes, starts, sizes, strides, mode=None):
    """One slice layer over the named axes (the other dims copied whole), the layer itself: starts and sizes may be
    runtime ints, given as shape tensors then."""
    runtime = any(is_runtime(ctx, value) for value in list(starts) + list(sizes))
    placeholder = (0,) * len(axes)
    layer = ctx.net.add_slice(x, placeholder if runtime else tuple(starts), placeholder if runtime else tuple(sizes),
                              tuple(strides))
    if runtime:
        layer.set_input(1, shape_vector(ctx, list(starts)))
        layer.set_input(2, shape_vector(ctx, list(sizes)))
    layer.axes = tuple(axes)
    if mode is not None:
        layer.mode = mode
    return layer


def reshape_trt_dims(ctx, tensor, dims):
    """`tensor` reshaped to TensorRT's reshape_dims: a 0 copies the input's dim at that index, one -1 is inferred."""
    layer = ctx.net.add_shuffle(tensor)
    layer.reshape_dims = tuple(dims)
    return layer.get_output(0)


def insert_unit_dims(ctx, tensor, positions):
    """`tensor` with size-1 dims at `positions` (dims of the result): one shuffle whose reshape appends them (its
    0s copy every input dim, static or dynamic) and whose second transpose moves them into place."""
    positions, kept = set(positions), rank(tensor)
    units, others = iter(range(kept, kept + len(positions))), iter(range(kept))
    layer = ctx.net.add_shuffle(tensor)
    layer.reshape_dims = (0,) * kept + (1,) * len(positions)
    layer.second_transpose = tuple(next(units) if d in positions else next(others)
                                   for d in range(kept + len(positions)))
    return layer.get_output(0)


def unsqueeze_to_rank(ctx, tensor, target_rank):
    """Prepend size-1 dims so `tensor` has `target_rank` dims (PyTorch broadcasting -> TensorRT's equal ranks)."""
    missing = target_rank - rank(tensor)
    if missing <= 0:
        return tensor
    dims = tuple(tensor.shape)
    if dims.count(-1) > 1:  # the shuffle infers one -1 only: copy the dims instead
        return insert_unit_dims(ctx, tensor, range(missing))
    return reshape_trt_dims(ctx, tensor, (1,) * missing + dims)


def broadcast_pair(ctx, a, b):
    """Give two ITensors equal ranks by prepending 1s to the lower-rank one."""
    target = max(rank(a), rank(b))
    return unsqueeze_to_rank(ctx, a, target), unsqueeze_to_rank(ctx, b, target)


def elementwise(ctx, a, b, op, dtype=None):
    """`a <op> b` with PyTorch's type promotion and broadcasting; a or b may be scalars or tensors."""
    dtype = dtype or promote_types(ctx, a, b)
    a, b = broadcast_pair(ctx, to_itensor(ctx, a, dtype), to_itensor(ctx, b, dtype))
    return ctx.net.add_elementwise(a, b, op).get_output(0)


def choose(ctx, condition, then_value, else_value, dtype):
    """select(condition, then, else) with the values as `dtype` and all three of one rank."""
    condition = condition if isinstance(condition, ctx.trt.ITensor) else ctx.constant(condition)
    if dtype_of(ctx, condition) != torch.bool:
        raise ValueError(f"the condition must be a bool tensor, got {dtype_of(ctx, condition)}")
    then_value, else_value = broadcast_pair(ctx, to_itensor(ctx, then_value, dtype), to_itensor(ctx, else_value, dtype))
    target = max(rank(condition), rank(then_value))
    tensors = [unsqueeze_to_rank(ctx, t, target) for t in (condition, then_value, else_value)]
    return ctx.net.add_select(*tensors).get_output(0)


def in_float32(ctx, x):
    """(x's dtype, x in float32 when it is half or bfloat16): what PyTorch computes such ops in, rounding only the
    result."""
    dtype = dtype_of(ctx, x)
    return dtype, cast(ctx, x, torch.float32) if dtype in HALF_DTYPES else x


def clamped(ctx, x, low, high):
    """min(max(x, low), high) in the dtype PyTorch promotes x and the bounds to; a bound of None is left out."""
    ops = ctx.trt.ElementWiseOperation
    dtype = promote_types(ctx, *(v for v in (x, low, high) if v is not None))
    result = cast(ctx, x, dtype)
    if low is not None:
        result = elementwise(ctx, result, low, ops.MAX, dtype)
    if high is not None:
        result = elementwise(ctx, result, high, ops.MIN, dtype)
    return result


def reshape_torch_sizes(ctx, tensor, sizes, copied=0):
    """`tensor` reshaped to PyTorch's `sizes`: a 0 is a zero-length dim, one -1 is inferred.

    The first `copied` sizes are the input's own dims, where a -1 is a dynamic dim (as ITensor.shape reports
    it), copied with TensorRT's 0; one other -1 is inferred. A literal 0 turns zero_is_placeholder off, so then
    nothing is copied. Sizes known only at run time (runtime ints) reshape through a shape tensor.
    """
    if any(is_runtime(ctx, size) for size in sizes):
        return reshape_to_shape_tensor(ctx, tensor, sizes)
    literal_zero = 0 in sizes
    dims = [0 if d == -1 and i < copied and not literal_zero else d for i, d in enumerate(sizes)]
    if dims.count(-1) > 1:
        raise NotImplementedError(f"reshaping {tuple(tensor.shape)} to {tuple(sizes)} needs more than one dynamic "
                                  "dim inferred")
    layer = ctx.net.add_shuffle(tensor)
    layer.reshape_dims = tuple(dims)
    layer.zero_is_placeholder = not literal_zero
    return layer.get_output(0)


def drop_unit_dims(ctx, tensor, dims):
    """`tensor` without its dims `dims`, all of size 1: they go last, and the reshape's 0s copy the kept ones (which
    may be dynamic)."""
    kept = [d for d in range(rank(tensor)) if d not in dims]
    layer = ctx.net.add_shuffle(tensor)
    layer.first_transpose = tuple(kept + list(dims))
    layer.reshape_dims = (0,) * len(kept)
    return layer.get_output(0)


def unsqueeze(ctx, tensor, dim):
    """`tensor` with a size-1 dim inserted at `dim` (PyTorch's unsqueeze; negative dims count from rank + 1)."""
    dim = normalize_dim(dim, rank(tensor) + 1)
    shape = list(tensor.shape)
    if shape[dim:].count(-1) > 1:  # dynamic dims past `dim` move: copy them all
        return insert_unit_dims(ctx, tensor, [dim])
    return reshape_torch_sizes(ctx, tensor, shape[:dim] + [1] + shape[dim:], copied=dim)


def linspace(ctx, length, start, step):
    """The INT64 values start, start + step, ... (`length` of them, ints or runtime ints): a constant, or a
    LINSPACE fill when any is known only at run time."""
    if not any(is_runtime(ctx, v) for v in (length, start, step)):
        return ctx.constant(torch.arange(length, dtype=torch.int64) * step + start)
    layer = ctx.net.add_fill((1,), ctx.trt.FillOperation.LINSPACE, ctx.trt.int64)
    layer.set_input(0, shape_vector(ctx, [length]))
    layer.set_input(1, as_int64(ctx, start))
    layer.set_input(2, shape_vector(ctx, [step]))
    return layer.get_output(0)


def triangle_mask(ctx, rows, columns, diagonal, lower, rank_):
    """The bool mask of torch.tril (lower) or torch.triu over a [rows, columns] matrix (ints or runtime ints),
    with leading 1s to `rank_` dims: column - row <= diagonal (lower) or >= diagonal (upper)."""
    lead = (1,) * (rank_ - 2)
    if not any(is_runtime(ctx, n) for n in (rows, columns, diagonal)):
        mask = (torch.tril if lower else torch.triu)(torch.ones(rows, columns, dtype=torch.bool), diagonal)
        return ctx.constant(mask.reshape(lead + (rows, columns)))
    row = reshape_trt_dims(ctx, linspace(ctx, rows, 0, 1), lead + (-1, 1))
    column = reshape_trt_dims(ctx, linspace(ctx, columns, 0, 1), lead + (1, -1))
    offset = ctx.net.add_elementwise(column, row, ctx.trt.ElementWiseOperation.SUB).get_output(0)
    operation = ctx.trt.ElementWiseOperation.LESS if lower else ctx.trt.ElementWiseOperation.GREATER
    bound = arithmetic(ctx, "SUM" if lower else "SUB", diagonal, 1)
    bound = reshape_trt_dims(ctx, as_int64(ctx, bound), (1,) * rank_)
    return ctx.net.add_elementwise(offset, bound, operation).get_output(0)


def constant_weights(arg):
    """A weight argument's compile-time tensor; the layers here bake their weights into the engine."""
    if arg.is_itensor():
        raise ValueError(f"'{arg.name}' is a runtime tensor, but TensorRT needs these weights at build time; make it "
                         "a parameter or buffer of the module (freezing turns those into constants)")
    return arg.to_tensor().detach()


def host_weights(ctx, tensor, dtype):
    """`tensor` in `dtype` as Weights of an add_* call (ConversionCtx.host_weights)."""
    return ctx.host_weights(tensor.detach().to(dtype).cpu().contiguous())


def expand(values, n):
    """A per-spatial-dim list: PyTorch lets one value stand for all n dims."""
    return list(values) * n if len(values) == 1 else list(values)


def spatial_view(ctx, x, n):
    """`x` ([N, C, *S] or unbatched [C, *S], len(S) = n) as the rank-4/5 tensor 2-D/3-D layers take."""
    rank = len(x.shape)
    if rank not in (n + 1, n + 2):
        raise ValueError(f"a {n}-D window op needs a rank-{n + 2} (or unbatched rank-{n + 1}) input, got rank {rank}")
    added = (n == 1) + (rank == n + 1)
    if not added:
        return x
    layer = ctx.net.add_shuffle(x)
    layer.reshape_dims = (0,) * rank + (1,) * added
    if rank == n + 1:
        layer.second_transpose = (rank + added - 1, *range(rank + added - 1))  # a new unit dim becomes the batch
    return layer.get_output(0)


def unview(ctx, y, rank, n):
    """Undo `spatial_view` on a layer's output: back to `rank` dims."""
    if len(y.shape) == rank:
        return y
    layer = ctx.net.add_shuffle(y)
    if rank == n + 1:
        layer.first_transpose = (*range(1, len(y.shape)), 0)  # the unit batch goes last, beside the unit 1-D dim
    layer.reshape_dims = (0,) * rank
    return layer.get_output(0)
