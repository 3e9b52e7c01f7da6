"""Unary converters: one IUnaryLayer each (exp, log, sqrt, abs, trigonometric, ...), and the ops built from them.

TensorRT's unary ops take floats, except ABS and SIGN (also integers) and NOT (BOOL): integer inputs of
the float ops are computed in float32 as PyTorch promotes them; rounding ops are the identity on
integers, and negation of an integer is emitted as 0 - x.
"""

import math

from ..conversion.registry import converter, converter_table
from ._helpers import as_float, dtype_of, elementwise
from ._math import expm1 as accurate_expm1, log1p as accurate_log1p, truncated

_FLOAT_UNARY = {
    "aten::exp(Tensor self) -> Tensor": "EXP",
    "aten::log(Tensor self) -> Tensor": "LOG",
    "aten::sqrt(Tensor self) -> Tensor": "SQRT",
    "aten::sin(Tensor self) -> Tensor": "SIN",
    "aten::cos(Tensor self) -> Tensor": "COS",
    "aten::tan(Tensor self) -> Tensor": "TAN",
    "aten::asin(Tensor self) -> Tensor": "ASIN",
    "aten::acos(Tensor self) -> Tensor": "ACOS",
    "aten::atan(Tensor self) -> Tensor": "ATAN",
    "aten::sinh(Tensor self) -> Tensor": "SINH",
    "aten::cosh(Tensor self) -> Tensor": "COSH",
    "aten::asinh(Tensor self) -> Tensor": "ASINH",
    "aten::acosh(Tensor self) -> Tensor": "ACOSH",
    "aten::atanh(Tensor self) -> Tensor": "ATANH",
    "aten::erf(Tensor self) -> Tensor": "ERF",
    "aten::reciprocal(Tensor self) -> Tensor": "RECIP",
}
_ROUNDING = {
    "aten::floor(Tensor self) -> Tensor": "FLOOR",
    "aten::ceil(Tensor self) -> Tensor": "CEIL",
    "aten::round(Tensor self) -> Tensor": "ROUND",
}
_INTEGER_UNARY = {
    "aten::abs(Tensor self) -> Tensor": "ABS",
    "aten::sign(Tensor self) -> Tensor": "SIGN",
}
_FLOAT_CHECKS = {
    "aten::isnan(Tensor self) -> Tensor": "ISNAN",
    "aten::isinf(Tensor self) -> Tensor": "ISINF",
}


def _unary(ctx, x, op_name):
    return ctx.net.add_unary(x, getattr(ctx.trt.UnaryOperation, op_name)).get_output(0)


def _float_unary(ctx, node, args, op_name):
    return ctx.set_output(node, [_unary(ctx, as_float(ctx, args[0].itensor()), op_name)])


def _rounding(ctx, node, args, op_name):
    x = args[0].itensor()
    return ctx.set_output(node, [_unary(ctx, x, op_name) if dtype_of(ctx, x).is_floating_point else x])


def _integer_unary(ctx, node, args, op_name):
    return ctx.set_output(node, [_unary(ctx, args[0].itensor(), op_name)])


converter_table(_FLOAT_UNARY, _float_unary, "UnaryOperation.{}; integers compute in float32.")
converter_table(_ROUNDING, _rounding, "UnaryOperation.{}; the identity on integers.")
converter_table(_INTEGER_UNARY, _integer_unary, "UnaryOperation.{}.")
converter_table(_FLOAT_CHECKS, _float_unary, "UnaryOperation.{}; false for integers.")


@converter("aten::neg(Tensor self) -> Tensor")
def neg(ctx, node, args):
    """-self; TensorRT's NEG is float-only, so integers compute 0 - self."""
    x = args[0].itensor()
    if dtype_of(ctx, x).is_floating_point:
        return ctx.set_output(node, [_unary(ctx, x, "NEG")])
    return ctx.set_output(node, [elementwise(ctx, 0, x, ctx.trt.ElementWiseOperation.SUB, dtype_of(ctx, x))])


@converter("aten::trunc(Tensor self) -> Tensor")
def trunc(ctx, node, args):
    """Round toward zero (TensorRT has no TRUNC); the identity on integers."""
    x = args[0].itensor()
    return ctx.set_output(node, [truncated(ctx, x) if dtype_of(ctx, x).is_floating_point else x])


@converter("aten::rsqrt(Tensor self) -> Tensor")
def rsqrt(ctx, node, args):
    """1 / sqrt(self)."""
    return ctx.set_output(node, [_unary(ctx, _unary(ctx, as_float(ctx, args[0].itensor()), "SQRT"), "RECIP")])


def _scaled_log(ctx, node, args, base):
    log = _unary(ctx, as_float(ctx, args[0].itensor()), "LOG")
    return ctx.set_output(node, [elementwise(ctx, log, 1 / math.log(base), ctx.trt.ElementWiseOperation.PROD)])


converter_table({"aten::log2(Tensor self) -> Tensor": 2, "aten::log10(Tensor self) -> Tensor": 10}, _scaled_log,
                "log(self) / log({}).")


@converter("aten::log1p(Tensor self) -> Tensor")
def log1p(ctx, node, args):
    """log(1 + self), accurate for small self."""
    return ctx.set_output(node, [accurate_log1p(ctx, args[0].itensor())])


@converter("aten::expm1(Tensor self) -> Tensor")
def expm1(ctx, node, args):
    """exp(self) - 1, accurate for small self."""
    return ctx.set_output(node, [accurate_expm1(ctx, args[0].itensor())])
