"""Softmax converters: softmax as one ISoftMaxLayer along the normalized dim, log_softmax in its stable form.

`dtype=` (or `_softmax`'s half_to_float) casts the input first. log_softmax is computed as
x - max - log(sum(exp(x - max))) rather than log(softmax(x)), which underflows to -inf in
float16 once logits are ~17 apart.
"""

import torch

from ..conversion.args import Arg
from ..conversion.registry import converter_table
from ..targets.dtypes import scalar_type
from ._helpers import cast, elementwise, normalize_dim, rank


def _input(ctx, args, dtype):
    """The input as `dtype` when given, and the positive dim; TensorRT needs rank >= 1."""
    x = args[0].itensor()
    if rank(x) == 0:
        raise NotImplementedError("softmax of a 0-d tensor")
    return (x if dtype is None else cast(ctx, x, dtype)), normalize_dim(args["dim"].to_int(), rank(x))


def _add_softmax(ctx, x, dim):
    """Softmax along dim: one ISoftMaxLayer."""
    layer = ctx.net.add_softmax(x)
    layer.axes = 1 << dim
    return layer.get_output(0)


def _add_log_softmax(ctx, x, dim):
    """Log-softmax along dim: x - max - log(sum(exp(x - max)))."""
    ops = ctx.trt.ElementWiseOperation
    peak = ctx.net.add_reduce(x, ctx.trt.ReduceOperation.MAX, 1 << dim, True).get_output(0)
    shifted = elementwise(ctx, x, peak, ops.SUB)
    exp = ctx.net.add_unary(shifted, ctx.trt.UnaryOperation.EXP).get_output(0)
    total = ctx.net.add_reduce(exp, ctx.trt.ReduceOperation.SUM, 1 << dim, True).get_output(0)
    log_total = ctx.net.add_unary(total, ctx.trt.UnaryOperation.LOG).get_output(0)
    return elementwise(ctx, shifted, log_total, ops.SUB)


_SOFTMAX = {  # schema: the layers that compute it
    "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor": _add_softmax,
    "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor": _add_softmax,
    "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor": _add_log_softmax,
    "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor": _add_log_softmax,
}


def _input_dtype(args):
    """The dtype to compute in: `dtype=`, float32 for half_to_float, else None (the input's own)."""
    if args.get("half_to_float", False).to_bool():
        return torch.float32
    return scalar_type(args.get("dtype").optional(Arg.to_int))


def _softmax_family(ctx, node, args, add_layers):
    x, dim = _input(ctx, args, _input_dtype(args))
    return ctx.set_output(node, [add_layers(ctx, x, dim)])


converter_table(_SOFTMAX, _softmax_family, "{.__doc__} `dtype=` or half_to_float casts the input first.")
