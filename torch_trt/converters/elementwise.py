"""Binary element-wise converters with PyTorch's broadcasting and type promotion: arithmetic (add, sub, mul, div,
pow, remainder, fmod), clamp, maximum/minimum, comparisons and logical ops."""

import torch

from ..conversion.registry import converter
from ._helpers import broadcast_pair, cast, dtype_of, elementwise, promote_types, to_itensor


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


def _scaled_by_scalar(ctx, a, b, op, dtype):
    """`a <op> b` in `dtype`; a Python number that overflows a half dtype makes it compute in float32 and cast back,
    as PyTorch computes half ops with their scalar in float32 (x * 1e5 is finite where x is small)."""
    scalars = [v for v in (a, b) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if dtype in (torch.float16, torch.bfloat16) and any(abs(v) > torch.finfo(dtype).max for v in scalars):
        return cast(ctx, elementwise(ctx, a, b, op, torch.float32), dtype)
    return elementwise(ctx, a, b, op, dtype)


@converter("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor")
@converter("aten::mul.Scalar(Tensor self, Scalar other) -> Tensor")
def mul(ctx, node, args):
    """self * other."""
    a, b = args[0].value, args[1].value
    return ctx.set_output(node, [_scaled_by_scalar(ctx, a, b, ctx.trt.ElementWiseOperation.PROD,
                                                   promote_types(ctx, a, b))])


def _divide(ctx, a, b, rounding_mode):
    """PyTorch division: true division promotes integers to float; trunc and floor keep the dtype."""
    ops = ctx.trt.ElementWiseOperation
    dtype = promote_types(ctx, a, b)
    if rounding_mode is None:
        return _scaled_by_scalar(ctx, a, b, ops.DIV, dtype if dtype.is_floating_point else torch.float32)
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


def _comparable(ctx, a, b):
    """a and b as ITensors of one dtype TensorRT compares (bool compares as int32), with equal ranks."""
    dtype = promote_types(ctx, a, b)
    dtype = torch.int32 if dtype == torch.bool else dtype
    return broadcast_pair(ctx, to_itensor(ctx, a, dtype), to_itensor(ctx, b, dtype))


def _compare(ctx, a, b, op_name):
    a, b = _comparable(ctx, a, b)
    return ctx.net.add_elementwise(a, b, getattr(ctx.trt.ElementWiseOperation, op_name)).get_output(0)


def _logical(ctx, a, b, op_name):
    return ctx.net.add_elementwise(a, b, getattr(ctx.trt.ElementWiseOperation, op_name)).get_output(0)


def _not(ctx, x):
    return ctx.net.add_unary(x, ctx.trt.UnaryOperation.NOT).get_output(0)


# TensorRT compares with EQUAL, GREATER and LESS; the others combine them so that NaN compares as PyTorch's do.
_COMPARISONS = {
    "eq": lambda ctx, a, b: _compare(ctx, a, b, "EQUAL"),
    "ne": lambda ctx, a, b: _not(ctx, _compare(ctx, a, b, "EQUAL")),
    "lt": lambda ctx, a, b: _compare(ctx, a, b, "LESS"),
    "gt": lambda ctx, a, b: _compare(ctx, a, b, "GREATER"),
    "le": lambda ctx, a, b: _logical(ctx, _compare(ctx, a, b, "LESS"), _compare(ctx, a, b, "EQUAL"), "OR"),
    "ge": lambda ctx, a, b: _logical(ctx, _compare(ctx, a, b, "GREATER"), _compare(ctx, a, b, "EQUAL"), "OR"),
}


def _comparison_converter(name, compare):
    def convert(ctx, node, args):
        return ctx.set_output(node, [compare(ctx, args[0].value, args[1].value)])

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"self {name} other, a BOOL tensor."
    return convert


for _name, _compare_fn in _COMPARISONS.items():
    _function = _comparison_converter(_name, _compare_fn)
    converter(f"aten::{_name}.Tensor(Tensor self, Tensor other) -> Tensor")(_function)
    converter(f"aten::{_name}.Scalar(Tensor self, Scalar other) -> Tensor")(_function)


def _as_bool(ctx, tensor, op_name):
    """`tensor` when it is BOOL; other dtypes are refused (TensorRT has no bitwise integer ops)."""
    if dtype_of(ctx, tensor) != torch.bool:
        raise NotImplementedError(f"{op_name} of {dtype_of(ctx, tensor)} tensors: TensorRT's logical ops take BOOL "
                                  "only")
    return tensor


def _truth(ctx, value):
    """value != 0 as a BOOL ITensor (PyTorch's logical_* read any dtype as truth values)."""
    if dtype_of(ctx, value) == torch.bool:
        return to_itensor(ctx, value, torch.bool)
    return _not(ctx, _compare(ctx, value, 0, "EQUAL"))


def _bitwise_converter(op_name):
    def convert(ctx, node, args):
        a, b = _as_bool(ctx, args[0].itensor(), node.kind()), _as_bool(ctx, args[1].itensor(), node.kind())
        return ctx.set_output(node, [_logical(ctx, *broadcast_pair(ctx, a, b), op_name)])

    convert.__name__ = convert.__qualname__ = f"bitwise_{op_name.lower()}"
    convert.__doc__ = f"Bitwise {op_name} of bool tensors (a logical {op_name})."
    return convert


def _logical_converter(op_name):
    def convert(ctx, node, args):
        a, b = _truth(ctx, args[0].value), _truth(ctx, args[1].value)
        return ctx.set_output(node, [_logical(ctx, *broadcast_pair(ctx, a, b), op_name)])

    convert.__name__ = convert.__qualname__ = f"logical_{op_name.lower()}"
    convert.__doc__ = f"Logical {op_name}: nonzero values are true; the result is BOOL."
    return convert


# Only the Tensor forms: a bool Scalar reaches TorchScript as the int 0 or 1 (scripted; tracing one fails), and a
# bool tensor with an int is an int64 bitwise op, which TensorRT lacks.
for _op in ("AND", "OR", "XOR"):
    _bitwise = _bitwise_converter(_op)
    for _name in (f"__{_op.lower()}__", f"bitwise_{_op.lower()}"):
        converter(f"aten::{_name}.Tensor(Tensor self, Tensor other) -> Tensor")(_bitwise)
    converter(f"aten::logical_{_op.lower()}(Tensor self, Tensor other) -> Tensor")(_logical_converter(_op))


@converter("aten::bitwise_not(Tensor self) -> Tensor")
def bitwise_not(ctx, node, args):
    """~self on a bool tensor."""
    return ctx.set_output(node, [_not(ctx, _as_bool(ctx, args[0].itensor(), node.kind()))])


@converter("aten::logical_not(Tensor self) -> Tensor")
def logical_not(ctx, node, args):
    """self == 0, a BOOL tensor."""
    return ctx.set_output(node, [_not(ctx, _truth(ctx, args[0].itensor()))])


def _extremum(ctx, a, b, op_name):
    """Element-wise MAX or MIN; bool computes in int32 (TensorRT's MAX/MIN refuse BOOL) and is cast back."""
    dtype = promote_types(ctx, a, b)
    compute = torch.int32 if dtype == torch.bool else dtype
    return cast(ctx, elementwise(ctx, a, b, getattr(ctx.trt.ElementWiseOperation, op_name), compute), dtype)


@converter("aten::maximum(Tensor self, Tensor other) -> Tensor")
@converter("aten::max.other(Tensor self, Tensor other) -> Tensor")
def maximum(ctx, node, args):
    """Element-wise maximum."""
    return ctx.set_output(node, [_extremum(ctx, args[0].value, args[1].value, "MAX")])


@converter("aten::minimum(Tensor self, Tensor other) -> Tensor")
@converter("aten::min.other(Tensor self, Tensor other) -> Tensor")
def minimum(ctx, node, args):
    """Element-wise minimum."""
    return ctx.set_output(node, [_extremum(ctx, args[0].value, args[1].value, "MIN")])


def _modulo(ctx, a, b, rounding_mode):
    """a - round(a / b) * b, rounding the quotient by `rounding_mode` (floor: remainder, trunc: fmod)."""
    dtype = promote_types(ctx, a, b)
    quotient = _divide(ctx, a, b, rounding_mode)
    return elementwise(ctx, a, elementwise(ctx, quotient, b, ctx.trt.ElementWiseOperation.PROD, dtype),
                       ctx.trt.ElementWiseOperation.SUB, dtype)


@converter("aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor")
@converter("aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor")
@converter("aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor")
def remainder(ctx, node, args):
    """Python's modulo: the result has the divisor's sign."""
    return ctx.set_output(node, [_modulo(ctx, args[0].value, args[1].value, "floor")])


@converter("aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor")
@converter("aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor")
def fmod(ctx, node, args):
    """C's fmod: the result has the dividend's sign."""
    return ctx.set_output(node, [_modulo(ctx, args[0].value, args[1].value, "trunc")])
