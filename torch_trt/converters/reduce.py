"""Reduction converters: sum, mean, prod, amax/amin and full max/min as one IReduceLayer each.

Registered from one table (schema -> ReduceOperation) feeding one builder. `dim` None or []
reduces every dim; negative dims count from the end; `dtype=` casts the input first. Result
dtypes follow PyTorch: integer and bool sums and products widen to int64; max and min keep the
input dtype, computing in int32 when TensorRT's reduce refuses it (bool, int8, uint8).
"""

import torch

from ..conversion.args import Arg
from ..conversion.registry import converter
from ._helpers import axes_mask, cast, dtype_of, rank, scalar_type

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
_REDUCIBLE = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64)


def _named(args, name, accessor, default):
    """The argument `name` read by `accessor`; `default` when this overload lacks it or it is None."""
    arg = next((a for a in args if a.name == name), None)
    return default if arg is None or arg.is_none() else accessor(arg)


def _result_dtype(ctx, x, op_name, dtype):
    """PyTorch's result dtype: `dtype=` if given, int64 for integer sums and products, else the input's."""
    if dtype is not None:
        return dtype
    widens = op_name in ("SUM", "PROD") and not dtype_of(ctx, x).is_floating_point
    return torch.int64 if widens else dtype_of(ctx, x)


def _reduce_converter(schema, op_name):
    def convert(ctx, node, args):
        x = args[0].itensor()
        dims = _named(args, "dim", Arg.to_int_list, [])
        dtype = _result_dtype(ctx, x, op_name, scalar_type(_named(args, "dtype", Arg.to_int, None)))
        x = cast(ctx, x, dtype if dtype in _REDUCIBLE else torch.int32)
        if rank(x) == 0:  # every reduction of a 0-d tensor is the tensor itself
            return ctx.set_output(node, [cast(ctx, x, dtype)])
        mask = axes_mask(dims or range(rank(x)), rank(x))
        keepdim = _named(args, "keepdim", Arg.to_bool, False)
        reduced = ctx.net.add_reduce(x, getattr(ctx.trt.ReduceOperation, op_name), mask, keepdim).get_output(0)
        return ctx.set_output(node, [cast(ctx, reduced, dtype)])

    convert.__name__ = convert.__qualname__ = schema.split("(")[0].removeprefix("aten::").replace(".", "_")
    convert.__doc__ = f"Reduce {op_name} over the given dims (all when none are given)."
    return convert


for _schema, _op in _REDUCE.items():
    converter(_schema)(_reduce_converter(_schema, _op))
