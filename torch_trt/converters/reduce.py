"""Reduction converters: sum, mean, prod, amax/amin and full max/min as one IReduceLayer each; below them
max/min over a dim and argmax/argmin (a reduce and the first position holding its result), topk and sort
(ITopKLayer), var/std, norms, any/all, logsumexp and
cumsum (ICumulativeLayer).

Registered from one table (schema -> ReduceOperation) feeding one builder. `dim` None or []
reduces every dim; negative dims count from the end; `dtype=` casts the input first (a float
mean of another float dtype on the CPU averages in float32 and casts the mean, as PyTorch does there). Result
dtypes follow PyTorch: integer and bool sums and products widen to int64; max and min keep the
input dtype, computing in int32 when TensorRT's reduce refuses it (bool, int8, uint8).
"""

import math

import torch

from ..conversion import shape_tensors
from ..conversion.args import Arg
from ..conversion.registry import converter, converter_table
from ..targets.dtypes import FLOAT_DTYPES, INDEX_DTYPES, scalar_type
from ._helpers import (axes_mask, cast, choose, dtype_of, elementwise, in_float32, linspace, normalize_dim, rank,
                       reshape_torch_sizes, reshape_trt_dims)

_REDUCE = {
    "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor": "SUM",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor": "SUM",
    "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor": "AVG",
    "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor": "AVG",
    "aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor": "PROD",
    "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor": "PROD",
    "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor": "MAX",
    "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor": "MIN",
    "aten::max(Tensor self) -> Tensor": "MAX",
    "aten::min(Tensor self) -> Tensor": "MIN",
}
_REDUCIBLE = FLOAT_DTYPES + INDEX_DTYPES


def _result_dtype(ctx, x, op_name, dtype):
    """PyTorch's result dtype: `dtype=` if given, int64 for integer sums and products, else the input's."""
    if dtype is not None:
        return dtype
    widens = op_name in ("SUM", "PROD") and not dtype_of(ctx, x).is_floating_point
    return torch.int64 if widens else dtype_of(ctx, x)


def _compute_dtype(ctx, x, op_name, dtype):
    """The dtype a reduction runs in: its result's (int32 where TensorRT's reduce refuses that), except that
    PyTorch on the CPU averages floats of another dtype in float32 and casts the mean (so a mean of 7e4 and -7e4
    stays finite for float16; on CUDA it casts the input first, and gives NaN)."""
    x_dtype = dtype_of(ctx, x)
    on_cpu = torch.device(ctx.settings.device).type == "cpu"
    if op_name == "AVG" and on_cpu and dtype.is_floating_point and x_dtype.is_floating_point and dtype != x_dtype:
        return torch.float32
    return dtype if dtype in _REDUCIBLE else torch.int32


def _reduction(ctx, node, args, op_name):
    x = args[0].itensor()
    dtype = _result_dtype(ctx, x, op_name, scalar_type(args.get("dtype").optional(Arg.to_int)))
    x = cast(ctx, x, _compute_dtype(ctx, x, op_name, dtype))
    if rank(x) == 0:  # every reduction of a 0-d tensor is the tensor itself
        return ctx.set_output(node, [cast(ctx, x, dtype)])
    mask = axes_mask(args.get("dim", []).to_int_list() or range(rank(x)), rank(x))
    keepdim = args.get("keepdim", False).to_bool()
    reduced = ctx.net.add_reduce(x, getattr(ctx.trt.ReduceOperation, op_name), mask, keepdim).get_output(0)
    return ctx.set_output(node, [cast(ctx, reduced, dtype)])


converter_table(_REDUCE, _reduction, "Reduce {} over the given dims (all when none are given).")


# ---- reductions with indices: max/min over a dim and argmax/argmin; topk and sort, through ITopKLayer ----

MAX_TOPK = 3840  # TensorRT's largest k
_TOPK_TYPES = FLOAT_DTYPES + INDEX_DTYPES


def _topk(ctx, x, k, dim, largest):
    """(values, int64 indices) of the k largest or smallest along `dim`, sorted; TensorRT limits k and the dim."""
    dim = normalize_dim(dim, rank(x))
    if rank(x) - dim > 4:
        raise NotImplementedError(f"TensorRT's TopK reduces one of the last 4 dims; dim {dim} of a rank-{rank(x)} "
                                  "tensor is not")
    if not 1 <= k <= MAX_TOPK:
        raise NotImplementedError(f"TensorRT's TopK takes k from 1 to {MAX_TOPK}, got {k}")
    dtype = dtype_of(ctx, x)
    op = ctx.trt.TopKOperation.MAX if largest else ctx.trt.TopKOperation.MIN
    # The indices_type overload is TensorRT 10.16+: take the INT32 indices and widen them to PyTorch's int64.
    layer = ctx.net.add_topk(cast(ctx, x, dtype if dtype in _TOPK_TYPES else torch.int32), op, k, 1 << dim)
    return cast(ctx, layer.get_output(0), dtype), cast(ctx, layer.get_output(1), torch.int64)


def _drop_dim(ctx, tensor, dim):
    """`tensor` without its size-1 dim `dim`."""
    shape = list(tensor.shape)
    return reshape_torch_sizes(ctx, tensor, shape[:dim] + shape[dim + 1:], copied=dim)


def _extreme_along(ctx, x, dim, keepdim, largest):
    """(values, indices) of the max or min along `dim`, at its first occurrence, a NaN being both extremes, as PyTorch
    returns them; a 0-d tensor is its own extreme, at index 0. Not a TopK: TensorRT's does not say which of equal
    values it returns."""
    if rank(x) == 0:
        return x, ctx.constant(torch.tensor(0))
    dim, dtype = normalize_dim(dim, rank(x)), dtype_of(ctx, x)
    x = cast(ctx, x, dtype if dtype in _REDUCIBLE else torch.int32)
    values = _reduce(ctx, x, "MAX" if largest else "MIN", [dim], True)
    hits = elementwise(ctx, x, values, ctx.trt.ElementWiseOperation.EQUAL)
    if dtype.is_floating_point:  # where the extreme is NaN, the NaNs are its occurrences
        hits = elementwise(ctx, hits, ctx.net.add_unary(x, ctx.trt.UnaryOperation.ISNAN).get_output(0),
                           ctx.trt.ElementWiseOperation.OR)
    positions = reshape_trt_dims(ctx, linspace(ctx, shape_tensors.dim_size(ctx, x, dim), 0, 1),
                                 (1,) * dim + (-1,) + (1,) * (rank(x) - dim - 1))
    first = choose(ctx, hits, positions, torch.iinfo(torch.int64).max, torch.int64)
    values, indices = cast(ctx, values, dtype), _reduce(ctx, first, "MIN", [dim], True)
    if keepdim:
        return values, indices
    return _drop_dim(ctx, values, dim), _drop_dim(ctx, indices, dim)


@converter("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
def max_dim(ctx, node, args):
    """(values, indices) of the maximum along dim."""
    return ctx.set_output(node, list(_extreme_along(ctx, args[0].itensor(), args["dim"].to_int(),
                                                    args["keepdim"].to_bool(), True)))


@converter("aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
def min_dim(ctx, node, args):
    """(values, indices) of the minimum along dim."""
    return ctx.set_output(node, list(_extreme_along(ctx, args[0].itensor(), args["dim"].to_int(),
                                                    args["keepdim"].to_bool(), False)))


def _arg_extreme(ctx, node, args, largest):
    x, dim, keepdim = args[0].itensor(), args["dim"].optional(Arg.to_int), args["keepdim"].to_bool()
    if dim is not None:
        return ctx.set_output(node, [_extreme_along(ctx, x, dim, keepdim, largest)[1]])
    flat = reshape_trt_dims(ctx, x, (-1,))  # no dim: the index into the flattened tensor
    _, index = _extreme_along(ctx, flat, 0, True, largest)
    return ctx.set_output(node, [reshape_trt_dims(ctx, index, (1,) * rank(x) if keepdim else ())])


@converter("aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
def argmax(ctx, node, args):
    """The index of the maximum along dim (of the flattened tensor when dim is None)."""
    return _arg_extreme(ctx, node, args, True)


@converter("aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
def argmin(ctx, node, args):
    """The index of the minimum along dim (of the flattened tensor when dim is None)."""
    return _arg_extreme(ctx, node, args, False)


def _sorted_only(node, settings):
    """TensorRT's TopK returns sorted values; an unsorted topk's order is PyTorch's own choice."""
    return node.namedInput("sorted").toIValue() is True


@converter("aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
           "(Tensor values, Tensor indices)", supports=_sorted_only)
def topk(ctx, node, args):
    """The k largest (or smallest) values along dim and their indices, sorted."""
    return ctx.set_output(node, list(_topk(ctx, args[0].itensor(), args["k"].to_int(), args["dim"].to_int(),
                                           args["largest"].to_bool())))


def _unstable(node, settings):
    """TensorRT's TopK does not promise the input order of equal values, which a stable sort does."""
    return node.namedInput("stable").toIValue() is not True


def _sort(ctx, node, args):
    x = args[0].itensor()
    dim = normalize_dim(args["dim"].to_int(), max(rank(x), 1))
    if rank(x) == 0:
        return ctx.set_output(node, [x, ctx.constant(torch.tensor(0))])
    size = x.shape[dim]
    if size == -1:
        raise NotImplementedError("sort along a dynamic dim: TensorRT's TopK needs k, the dim's size, at build time")
    return ctx.set_output(node, list(_topk(ctx, x, size, dim, args["descending"].to_bool())))


@converter("aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)")
def sort(ctx, node, args):
    """Sort along dim: a TopK of the dim's whole size (up to TensorRT's largest k)."""
    return _sort(ctx, node, args)


@converter("aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
           "(Tensor values, Tensor indices)", supports=_unstable)
def sort_stable(ctx, node, args):
    """sort(stable=False or None): as sort."""
    return _sort(ctx, node, args)


# ---- statistics, norms, logical reductions, scans ----

def _dims_of(args, x):
    """The dims of a `dim` argument, every dim when it is None or empty."""
    dims = args.get("dim", []).to_int_list()
    return [normalize_dim(d, rank(x)) for d in dims] if dims else list(range(rank(x)))


def _reduce(ctx, x, op_name, dims, keepdim):
    if rank(x) == 0:
        return x
    return ctx.net.add_reduce(x, getattr(ctx.trt.ReduceOperation, op_name), axes_mask(dims, rank(x)),
                              keepdim).get_output(0)


def _variance(ctx, x, dims, correction, keepdim):
    """(sum(d^2) - sum(d)^2 / N) / max(N - correction, 0) of d = x - mean, N the count of reduced elements (read
    from the shape where a reduced dim is dynamic): the second term takes back what the rounding of the mean adds to
    the first (1e-3 of a variance of 1 at a mean of 1e6 in float32), as eager's exact mean does not."""
    ops = ctx.trt.ElementWiseOperation
    count = 1
    for dim in dims if rank(x) else ():
        count = shape_tensors.arithmetic(ctx, "PROD", count, shape_tensors.dim_size(ctx, x, dim))
    x = cast(ctx, x, dtype_of(ctx, x) if dtype_of(ctx, x).is_floating_point else torch.float32)
    if shape_tensors.is_runtime(ctx, count):
        count = cast(ctx, count, dtype_of(ctx, x))
        degrees = elementwise(ctx, elementwise(ctx, count, correction, ops.SUB), 0.0, ops.MAX)
    else:
        degrees = max(count - correction, 0)
    centered = elementwise(ctx, x, _reduce(ctx, x, "AVG", dims, True), ops.SUB)
    squares = _reduce(ctx, elementwise(ctx, centered, centered, ops.PROD), "SUM", dims, keepdim)
    drift = _reduce(ctx, centered, "SUM", dims, keepdim)
    total = elementwise(ctx, squares, elementwise(ctx, elementwise(ctx, drift, drift, ops.PROD), count, ops.DIV),
                        ops.SUB)
    return elementwise(ctx, total, degrees, ops.DIV)


def _correction(args):
    if "unbiased" in args:
        return 1 if args["unbiased"].to_bool() else 0
    return args.get("correction", 1).to_float()


_VARIANCE = ("(Tensor self, bool unbiased=True) -> Tensor",
             "(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
             "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor")
_STATISTICS = {f"aten::{name}{overload}{signature}": name for name in ("var", "std")
               for overload, signature in zip(("", ".dim", ".correction"), _VARIANCE)}


def _statistic(ctx, node, args, name):
    dtype, x = in_float32(ctx, args[0].itensor())
    variance = _variance(ctx, x, _dims_of(args, x), _correction(args), args.get("keepdim", False).to_bool())
    result = ctx.net.add_unary(variance, ctx.trt.UnaryOperation.SQRT).get_output(0) if name == "std" else variance
    return ctx.set_output(node, [cast(ctx, result, dtype if dtype.is_floating_point else torch.float32)])


converter_table(_STATISTICS, _statistic, "torch.{} over dims, with Bessel's correction (or `correction`).")


def _vector_norm(ctx, x, p, dims, keepdim):
    """The p-norm over dims: p 1, 2, inf, -inf, or any other p > 0 as sum(|x|^p)^(1/p)."""
    ops, unary = ctx.trt.ElementWiseOperation, ctx.trt.UnaryOperation
    magnitude = ctx.net.add_unary(x, unary.ABS).get_output(0)
    if p in (math.inf, -math.inf):
        return _reduce(ctx, magnitude, "MAX" if p > 0 else "MIN", dims, keepdim)
    if p <= 0:
        raise NotImplementedError(f"the {p}-norm: only p > 0 and inf norms are converted")
    if p == 1:
        return _reduce(ctx, magnitude, "SUM", dims, keepdim)
    if p == 2:
        squares = _reduce(ctx, elementwise(ctx, x, x, ops.PROD), "SUM", dims, keepdim)
        return ctx.net.add_unary(squares, unary.SQRT).get_output(0)
    powers = _reduce(ctx, elementwise(ctx, magnitude, p, ops.POW), "SUM", dims, keepdim)
    return elementwise(ctx, powers, 1 / p, ops.POW)


def _norm_input(ctx, args):
    """The input in the norm's dtype (`dtype=` when given); norms are float-only, as in PyTorch."""
    x = args[0].itensor()
    dtype = scalar_type(args.get("dtype").optional(Arg.to_int)) or dtype_of(ctx, x)
    if not dtype.is_floating_point:
        raise ValueError(f"norms need a float input, got {dtype}")
    return cast(ctx, x, dtype)


@converter("aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor")
@converter("aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor")
@converter("aten::norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) "
           "-> Tensor")
@converter("aten::norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor")
def norm(ctx, node, args):
    """torch.norm: the vector p-norm over dims (all when none are given)."""
    dtype, x = in_float32(ctx, _norm_input(ctx, args))
    p = args["p"].optional(Arg.to_float)
    keepdim = args.get("keepdim", False).to_bool()
    return ctx.set_output(node, [cast(ctx, _vector_norm(ctx, x, 2.0 if p is None else p, _dims_of(args, x), keepdim),
                                      dtype)])


@converter("aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
           "ScalarType? dtype=None) -> Tensor")
def linalg_vector_norm(ctx, node, args):
    """torch.linalg.vector_norm: the ord-norm over dims (all when none are given)."""
    dtype, x = in_float32(ctx, _norm_input(ctx, args))
    return ctx.set_output(node, [cast(ctx, _vector_norm(ctx, x, args["ord"].to_float(), _dims_of(args, x),
                                                        args["keepdim"].to_bool()), dtype)])


_TRUTH_REDUCTIONS = {f"aten::{name}{signature}": op_name for name, op_name in (("any", "MAX"), ("all", "MIN"))
                     for signature in ("(Tensor self) -> Tensor",
                                       ".dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
                                       ".dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor")}


def _truth_reduction(ctx, node, args, op_name):
    x = args[0].itensor()
    truth = x if dtype_of(ctx, x) == torch.bool else ctx.net.add_unary(
        elementwise(ctx, x, 0, ctx.trt.ElementWiseOperation.EQUAL, dtype_of(ctx, x)),
        ctx.trt.UnaryOperation.NOT).get_output(0)
    if args.get("dim", None).value == []:  # any(x, ()) reduces no dim: the truth values themselves
        return ctx.set_output(node, [truth])
    # TensorRT's reduce takes no BOOL: any is a MAX and all a MIN of the truth values as int32.
    reduced = _reduce(ctx, cast(ctx, truth, torch.int32), op_name, _dims_of(args, x),
                      args.get("keepdim", False).to_bool())
    return ctx.set_output(node, [cast(ctx, reduced, torch.bool)])


converter_table(_TRUTH_REDUCTIONS, _truth_reduction, "Whether any (MAX) or every (MIN) element over dims is "
                                                     "nonzero: a {} of the truth values.")


@converter("aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor")
def logsumexp(ctx, node, args):
    """log(sum(exp(x))) over dims, computed as m + log(sum(exp(x - m))), m the max where it is finite (else 0, as
    PyTorch's: inf - inf would be NaN), so it does not overflow."""
    ops, unary = ctx.trt.ElementWiseOperation, ctx.trt.UnaryOperation
    x = args[0].itensor()
    dtype = dtype_of(ctx, x) if dtype_of(ctx, x).is_floating_point else torch.float32
    x = cast(ctx, x, dtype)
    dims, keepdim = _dims_of(args, x), args["keepdim"].to_bool()
    peak = _reduce(ctx, x, "MAX", dims, True)
    peak = choose(ctx, ctx.net.add_unary(peak, unary.ISINF).get_output(0), 0.0, peak, dtype)
    exp = ctx.net.add_unary(elementwise(ctx, x, peak, ops.SUB), unary.EXP).get_output(0)
    log = ctx.net.add_unary(_reduce(ctx, exp, "SUM", dims, keepdim), unary.LOG).get_output(0)
    return ctx.set_output(node, [elementwise(ctx, _reduce(ctx, peak, "MAX", dims, keepdim), log, ops.SUM)])


@converter("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
def cumsum(ctx, node, args):
    """Inclusive prefix sums along dim (one ICumulativeLayer); integers and bools sum in int64, as in PyTorch."""
    x = args[0].itensor()
    dtype = scalar_type(args["dtype"].optional(Arg.to_int)) or (
        dtype_of(ctx, x) if dtype_of(ctx, x).is_floating_point else torch.int64)
    if rank(x) == 0:
        return ctx.set_output(node, [cast(ctx, x, dtype)])
    if not hasattr(ctx.net, "add_cumulative"):  # TensorRT 10.3, the oldest supported, predates it
        raise NotImplementedError("this TensorRT has no ICumulativeLayer; cumsum runs in PyTorch (a newer TensorRT "
                                  "converts it)")
    axis = ctx.constant(torch.tensor(normalize_dim(args["dim"].to_int(), rank(x)), dtype=torch.int32))
    layer = ctx.net.add_cumulative(cast(ctx, x, dtype), axis, ctx.trt.CumulativeOperation.SUM, False, False)
    return ctx.set_output(node, layer)
