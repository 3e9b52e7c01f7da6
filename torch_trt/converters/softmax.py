"""Softmax converters: softmax as one ISoftMaxLayer along the normalized dim, log_softmax in its stable form.

`dtype=` (or `_softmax`'s half_to_float) casts the input first. log_softmax is computed as
x - max - log(sum(exp(x - max))) rather than log(softmax(x)), which underflows to -inf in
float16 once logits are ~17 apart.
"""

import torch

from ..conversion.args import Arg
from ..conversion.registry import converter
from ._helpers import cast, elementwise, normalize_dim, rank, scalar_type


def _input(ctx, args, dtype):
    """The input as `dtype` when given, and the positive dim; TensorRT needs rank >= 1."""
    x = args[0].itensor()
    if rank(x) == 0:
        raise NotImplementedError("softmax of a 0-d tensor")
    return (x if dtype is None else cast(ctx, x, dtype)), normalize_dim(args["dim"].to_int(), rank(x))


def _add_softmax(ctx, x, dim):
    layer = ctx.net.add_softmax(x)
    layer.axes = 1 << dim
    return layer.get_output(0)


def _add_log_softmax(ctx, x, dim):
    ops = ctx.trt.ElementWiseOperation
    peak = ctx.net.add_reduce(x, ctx.trt.ReduceOperation.MAX, 1 << dim, True).get_output(0)
    shifted = elementwise(ctx, x, peak, ops.SUB)
    exp = ctx.net.add_unary(shifted, ctx.trt.UnaryOperation.EXP).get_output(0)
    total = ctx.net.add_reduce(exp, ctx.trt.ReduceOperation.SUM, 1 << dim, True).get_output(0)
    log_total = ctx.net.add_unary(total, ctx.trt.UnaryOperation.LOG).get_output(0)
    return elementwise(ctx, shifted, log_total, ops.SUB)


@converter("aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
def softmax(ctx, node, args):
    """Softmax along dim."""
    x, dim = _input(ctx, args, scalar_type(args["dtype"].optional(Arg.to_int)))
    return ctx.set_output(node, [_add_softmax(ctx, x, dim)])


@converter("aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
def log_softmax(ctx, node, args):
    """Log of softmax along dim."""
    x, dim = _input(ctx, args, scalar_type(args["dtype"].optional(Arg.to_int)))
    return ctx.set_output(node, [_add_log_softmax(ctx, x, dim)])


@converter("aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
def _softmax(ctx, node, args):
    """Softmax along dim; half_to_float computes a float16 input in float32."""
    x, dim = _input(ctx, args, torch.float32 if args["half_to_float"].to_bool() else None)
    return ctx.set_output(node, [_add_softmax(ctx, x, dim)])


@converter("aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
def _log_softmax(ctx, node, args):
    """Log-softmax along dim; half_to_float computes a float16 input in float32."""
    x, dim = _input(ctx, args, torch.float32 if args["half_to_float"].to_bool() else None)
    return ctx.set_output(node, [_add_log_softmax(ctx, x, dim)])
