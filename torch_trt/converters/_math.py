"""Element-wise math TensorRT has no layer for, built from its layers to PyTorch's accuracy."""

import torch

from ._helpers import as_float, cast, choose, dtype_of, elementwise, in_float32


def log1p(ctx, x):
    """log(1 + x), accurate where |x| is small (TensorRT has no LOG1P): with u = 1 + x rounded, log(u) * x / (u - 1)
    cancels u's rounding error (Goldberg); x itself where u rounds to 1, log(u) past 1e30 (where u is x, and
    log(u) * x overflows)."""
    ops, unary = ctx.trt.ElementWiseOperation, ctx.trt.UnaryOperation
    dtype, x = in_float32(ctx, as_float(ctx, x))
    u = elementwise(ctx, x, 1.0, ops.SUM)
    log, u_minus_1 = ctx.net.add_unary(u, unary.LOG).get_output(0), elementwise(ctx, u, 1.0, ops.SUB)
    result = elementwise(ctx, elementwise(ctx, log, x, ops.PROD), u_minus_1, ops.DIV)
    result = choose(ctx, elementwise(ctx, u_minus_1, 0.0, ops.EQUAL), x, result, torch.float32)
    result = choose(ctx, elementwise(ctx, x, 1e30, ops.GREATER), log, result, torch.float32)
    return cast(ctx, result, dtype)


def expm1(ctx, x):
    """exp(x) - 1, accurate where |x| is small (TensorRT has no EXPM1): with u = exp(x) rounded,
    (u - 1) * x / log(u) (Kahan); x itself where u rounds to 1, -1 where it underflows, u past 80 (where u - 1 is u,
    and (u - 1) * x overflows)."""
    ops, unary = ctx.trt.ElementWiseOperation, ctx.trt.UnaryOperation
    dtype, x = in_float32(ctx, as_float(ctx, x))
    u = ctx.net.add_unary(x, unary.EXP).get_output(0)
    u_minus_1 = elementwise(ctx, u, 1.0, ops.SUB)
    result = elementwise(ctx, elementwise(ctx, u_minus_1, x, ops.PROD), ctx.net.add_unary(u, unary.LOG).get_output(0),
                         ops.DIV)
    result = choose(ctx, elementwise(ctx, u_minus_1, 0.0, ops.EQUAL), x, result, torch.float32)
    result = choose(ctx, elementwise(ctx, u_minus_1, -1.0, ops.EQUAL), -1.0, result, torch.float32)
    result = choose(ctx, elementwise(ctx, x, 80.0, ops.GREATER), u, result, torch.float32)
    return cast(ctx, result, dtype)


def truncated(ctx, x):
    """x rounded toward zero (TensorRT has no TRUNC): ceil(x) below 0, floor(x) elsewhere, which keeps the sign of a
    zero (trunc(-0.3) is -0.0, as PyTorch's; -floor(-x) loses it where negation is 0 - x, as in Triton)."""
    ops, unary = ctx.trt.ElementWiseOperation, ctx.trt.UnaryOperation
    return choose(ctx, elementwise(ctx, x, 0.0, ops.LESS), ctx.net.add_unary(x, unary.CEIL).get_output(0),
                  ctx.net.add_unary(x, unary.FLOOR).get_output(0), dtype_of(ctx, x))
