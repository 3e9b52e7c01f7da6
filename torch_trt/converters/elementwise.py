"""Binary element-wise converters with PyTorch's broadcasting and type promotion (add, sub, mul, div, pow, clamp)."""

import torch

from ..conversion.registry import converter
from ._helpers import cast, elementwise, promote_types


def _scaled(ctx, other, alpha):
    """alpha * other, folded when other is a compile-time value."""
    if alpha == 1:
        return other
    if not isinstance(other, ctx.trt.ITensor):
        return other * alpha
    return elementwise(ctx, other, alpha, ctx.trt.ElementWiseOperation.PROD)


def _add_or_sub(op_name):
    def convert(ctx, node, args):
        op = getattr(ctx.trt.ElementWiseOperation, op_name)
        dtype = promote_types(ctx, args[0].value, args[1].value)
        other = _scaled(ctx, args[1].value, args["alpha"].value)
        return ctx.set_output(node, [elementwise(ctx, args[0].itensor(), other, op, dtype)])

    convert.__name__ = {"SUM": "add", "SUB": "sub"}[op_name]
    convert.__doc__ = f"self {'+' if op_name == 'SUM' else '-'} alpha * other."
    return convert


for _name, _op in (("add", "SUM"), ("sub", "SUB")):
    converter(f"aten::{_name}.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")(_add_or_sub(_op))
    converter(f"aten::{_name}.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")(_add_or_sub(_op))


# Only the Scalar form: TorchScript records torch.rsub(Tensor, Tensor) as aten::sub, scripted and traced.
@converter("aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
def rsub(ctx, node, args):
    """other - alpha * self."""
    dtype = promote_types(ctx, args[0].value, args[1].value)
    scaled = _scaled(ctx, args[0].itensor(), args["alpha"].value)
    return ctx.set_output(node, [elementwise(ctx, args[1].value, scaled, ctx.trt.ElementWiseOperation.SUB, dtype)])


@converter("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor")
@converter("aten::mul.Scalar(Tensor self, Scalar other) -> Tensor")
def mul(ctx, node, args):
    """self * other."""
    return ctx.set_output(node, [elementwise(ctx, args[0].value, args[1].value, ctx.trt.ElementWiseOperation.PROD)])


def _divide(ctx, a, b, rounding_mode):
    """PyTorch division: true division promotes integers to float; trunc and floor keep the dtype."""
    ops = ctx.trt.ElementWiseOperation
    dtype = promote_types(ctx, a, b)
    if rounding_mode is None:
        return elementwise(ctx, a, b, ops.DIV, dtype if dtype.is_floating_point else torch.float32)
    if rounding_mode == "floor":
        return elementwise(ctx, a, b, ops.FLOOR_DIV, dtype)
    quotient = elementwise(ctx, a, b, ops.DIV, dtype)
    if not dtype.is_floating_point:
        return quotient  # integer DIV truncates toward zero
    unary = ctx.trt.UnaryOperation  # trunc(q) = sign(q) * floor(|q|): TensorRT has no TRUNC
    magnitude = ctx.net.add_unary(ctx.net.add_unary(quotient, unary.ABS).get_output(0), unary.FLOOR).get_output(0)
    return elementwise(ctx, ctx.net.add_unary(quotient, unary.SIGN).get_output(0), magnitude, ops.PROD)


@converter("aten::div.Tensor(Tensor self, Tensor other) -> Tensor")
@converter("aten::div.Scalar(Tensor self, Scalar other) -> Tensor")
def div(ctx, node, args):
    """True division."""
    return ctx.set_output(node, [_divide(ctx, args[0].value, args[1].value, None)])


@converter("aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor")
@converter("aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor")
def div_mode(ctx, node, args):
    """Division with rounding_mode None, 'trunc' or 'floor'."""
    mode = args["rounding_mode"].optional(lambda a: a.to_str())
    return ctx.set_output(node, [_divide(ctx, args[0].value, args[1].value, mode)])


@converter("aten::floor_divide(Tensor self, Tensor other) -> Tensor")
@converter("aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor")
def floor_divide(ctx, node, args):
    """Floor division."""
    return ctx.set_output(node, [_divide(ctx, args[0].value, args[1].value, "floor")])


@converter("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor")
@converter("aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor")
@converter("aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor")
def pow(ctx, node, args):
    """self ** exponent; integer powers compute in float32 (TensorRT's POW takes floats) and cast back."""
    dtype = promote_types(ctx, args[0].value, args[1].value)
    compute = dtype if dtype.is_floating_point else torch.float32
    result = elementwise(ctx, args[0].value, args[1].value, ctx.trt.ElementWiseOperation.POW, compute)
    return ctx.set_output(node, [cast(ctx, result, dtype)])


def _clamp(ctx, node, x, low, high):
    ops = ctx.trt.ElementWiseOperation
    dtype = promote_types(ctx, *(v for v in (x, low, high) if v is not None))
    result = cast(ctx, x, dtype)
    if low is not None:
        result = elementwise(ctx, result, low, ops.MAX, dtype)
    if high is not None:
        result = elementwise(ctx, result, high, ops.MIN, dtype)
    return ctx.set_output(node, [result])


@converter("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor")
@converter("aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor")
def clamp(ctx, node, args):
    """min(max(self, min), max), with scalar or tensor bounds."""
    return _clamp(ctx, node, args[0].itensor(), args["min"].value, args["max"].value)


@converter("aten::clamp_min(Tensor self, Scalar min) -> Tensor")
def clamp_min(ctx, node, args):
    return _clamp(ctx, node, args[0].itensor(), args["min"].value, None)


@converter("aten::clamp_max(Tensor self, Scalar max) -> Tensor")
def clamp_max(ctx, node, args):
    return _clamp(ctx, node, args[0].itensor(), None, args["max"].value)
