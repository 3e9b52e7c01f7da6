"""Binary element-wise converters with PyTorch's broadcasting and type promotion: arithmetic (add, sub, mul, div,
pow, remainder, fmod), clamp, maximum/minimum, comparisons and logical ops."""

import torch

from ..conversion.args import Arg
from ..conversion.registry import converter, converter_table
from ..targets.dtypes import HALF_DTYPES
from ._helpers import (broadcast_pair, cast, cast_rounded, clamped, dtype_of, elementwise, promote_types, rank,
                       to_itensor)
from ._math import truncated


def _operands(args):
    """self and other, each an ITensor, a compile-time tensor or a Python number."""
    return args[0].operand(), args[1].operand()


def _scaled(ctx, other, alpha, dtype):
    """alpha * other in `dtype`, the op's result dtype (a narrower `other` would overflow first), folded when other is
    a compile-time value."""
    if alpha == 1:
        return other
    if not isinstance(other, ctx.trt.ITensor):
        return (torch.as_tensor(other).to(dtype) if isinstance(other, torch.Tensor) else other) * alpha
    return elementwise(ctx, other, alpha, ctx.trt.ElementWiseOperation.PROD, dtype)


_ADD_OR_SUB = {
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor": "SUM",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor": "SUM",
    "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor": "SUB",
    "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor": "SUB",
}


def _add_or_sub(ctx, node, args, op_name):
    a, b = _operands(args)
    dtype = promote_types(ctx, a, b)
    other = _scaled(ctx, b, args["alpha"].operand(), dtype)
    op = getattr(ctx.trt.ElementWiseOperation, op_name)
    return ctx.set_output(node, [elementwise(ctx, args[0].itensor(), other, op, dtype)])


converter_table(_ADD_OR_SUB, _add_or_sub, "ElementWiseOperation.{} of self and alpha * other.")


# Only the Scalar form: TorchScript records torch.rsub(Tensor, Tensor) as aten::sub, scripted and traced.
@converter("aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
def rsub(ctx, node, args):
    """other - alpha * self."""
    a, b = _operands(args)
    dtype = promote_types(ctx, a, b)
    scaled = _scaled(ctx, args[0].itensor(), args["alpha"].operand(), dtype)
    return ctx.set_output(node, [elementwise(ctx, b, scaled, ctx.trt.ElementWiseOperation.SUB, dtype)])


def _scaled_by_scalar(ctx, a, b, op, dtype):
    """`a <op> b` in `dtype`. PyTorch computes a half op with a scalar in float32 (x * 1e5 and x / 1e-8 are finite
    where x is small): so does this where the scalar is a float32 0-d tensor known only at run time, or a Python number
    or constant 0-d tensor that the half dtype cannot hold to its precision (beyond its range, or rounding to a
    subnormal or 0), and casts back."""
    if dtype in HALF_DTYPES and any(_beyond(ctx, v, dtype) for v in (a, b)):
        return cast(ctx, elementwise(ctx, a, b, op, torch.float32), dtype)
    return elementwise(ctx, a, b, op, dtype)


def _is_scalar(ctx, value):
    """Whether PyTorch takes `value` as a scalar operand: a Python number, or a 0-d tensor (known at compile time, or
    in float32 at run time)."""
    if isinstance(value, ctx.trt.ITensor):
        return rank(value) == 0 and dtype_of(ctx, value) == torch.float32
    return not isinstance(value, torch.Tensor) or value.dim() == 0


def _beyond(ctx, value, dtype):
    """Whether the scalar `value` (a Python number, or a 0-d tensor) needs more than half dtype `dtype` holds."""
    if isinstance(value, ctx.trt.ITensor):
        return _is_scalar(ctx, value)  # a float32 0-d tensor known at run time
    if isinstance(value, torch.Tensor):
        return value.dim() == 0 and value.is_floating_point() and _loses(value.item(), dtype)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and _loses(value, dtype)


def _loses(number, dtype):
    """Whether `number` rounded to `dtype` is off by more than the dtype's precision."""
    return abs(torch.tensor(number, dtype=dtype).item() - number) > abs(number) * torch.finfo(dtype).eps


@converter("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor")
@converter("aten::mul.Scalar(Tensor self, Scalar other) -> Tensor")
def mul(ctx, node, args):
    """self * other."""
    a, b = _operands(args)
    return ctx.set_output(node, [_scaled_by_scalar(ctx, a, b, ctx.trt.ElementWiseOperation.PROD,
                                                   promote_types(ctx, a, b))])


def _divide(ctx, a, b, rounding_mode):
    """PyTorch division: true division promotes integers to float; trunc and floor keep the dtype. A half tensor
    divided by a scalar rounds the float32 quotient, the scalar at float32's precision, as PyTorch's scalar kernels do
    (a // 0.1 of a half -7.5 is -75, where the half 0.1, 0.09998, gives -76); by a tensor, it divides in the half
    dtype, as PyTorch does."""
    ops = ctx.trt.ElementWiseOperation
    dtype = promote_types(ctx, a, b)
    if rounding_mode is None:
        return _scaled_by_scalar(ctx, a, b, ops.DIV, dtype if dtype.is_floating_point else torch.float32)
    compute = torch.float32 if dtype in HALF_DTYPES and _is_scalar(ctx, b) else dtype
    if rounding_mode == "floor":
        return cast(ctx, elementwise(ctx, a, b, ops.FLOOR_DIV, compute), dtype)
    quotient = elementwise(ctx, a, b, ops.DIV, compute)  # integer DIV truncates toward zero
    return cast(ctx, truncated(ctx, quotient) if dtype.is_floating_point else quotient, dtype)


_DIVISIONS = {  # schema: its rounding mode, unless the schema takes one
    "aten::div.Tensor(Tensor self, Tensor other) -> Tensor": None,
    "aten::div.Scalar(Tensor self, Scalar other) -> Tensor": None,
    "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor": None,
    "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor": None,
    "aten::floor_divide(Tensor self, Tensor other) -> Tensor": "floor",
    "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor": "floor",
}


def _division(ctx, node, args, rounding_mode):
    mode = args.get("rounding_mode", rounding_mode).optional(Arg.to_str)
    return ctx.set_output(node, [_divide(ctx, *_operands(args), mode)])


converter_table(_DIVISIONS, _division, "Division rounding the quotient by the schema's rounding_mode, else by {} "
                                        "(None: true division).")


@converter("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor")
@converter("aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor")
@converter("aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor")
def pow(ctx, node, args):
    """self ** exponent. As PyTorch computes them: x ** 0.5 and x ** -0.5 as a square root (NaN at -inf, where POW
    gives inf), an integer tensor to a small constant power by products (exact past float32's 2 ** 24, and wrapping
    on overflow as PyTorch's do). TensorRT's POW takes floats, so other integer powers are refused: in float32 they
    are wrong past 2 ** 24 and saturate instead of wrapping."""
    a, b = _operands(args)
    dtype = promote_types(ctx, a, b)
    if not dtype.is_floating_point and not (type(b) is int and 0 <= b <= _PRODUCT_POWERS):
        raise NotImplementedError(f"an integer power other than a constant 0..{_PRODUCT_POWERS}: TensorRT's POW "
                                  "computes in floats, exact only below 2**24")
    unary, ops = ctx.trt.UnaryOperation, ctx.trt.ElementWiseOperation
    if isinstance(a, ctx.trt.ITensor) and dtype.is_floating_point and b in (0.5, -0.5) and not isinstance(b, bool):
        root = ctx.net.add_unary(cast(ctx, a, dtype), unary.SQRT).get_output(0)
        return ctx.set_output(node, [root if b > 0 else ctx.net.add_unary(root, unary.RECIP).get_output(0)])
    if isinstance(a, ctx.trt.ITensor) and not dtype.is_floating_point and type(b) is int and 1 <= b <= _PRODUCT_POWERS:
        base = cast(ctx, a, dtype)
        power = base
        for _ in range(b - 1):
            power = elementwise(ctx, power, base, ops.PROD)
        return ctx.set_output(node, [power])
    compute = dtype if dtype.is_floating_point else torch.float32  # an integer x ** 0: 1, exact
    power = elementwise(ctx, a, b, ops.POW, compute)
    return ctx.set_output(node, [cast_rounded(ctx, power, dtype)])


_PRODUCT_POWERS = 8  # integer powers up to this one are products


@converter("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor")
@converter("aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor")
def clamp(ctx, node, args):
    """min(max(self, min), max), with scalar or tensor bounds."""
    low, high = args["min"].optional(Arg.operand), args["max"].optional(Arg.operand)
    return ctx.set_output(node, [clamped(ctx, args[0].itensor(), low, high)])


@converter("aten::clamp_min(Tensor self, Scalar min) -> Tensor")
def clamp_min(ctx, node, args):
    return ctx.set_output(node, [clamped(ctx, args[0].itensor(), args["min"].operand(), None)])


@converter("aten::clamp_max(Tensor self, Scalar max) -> Tensor")
def clamp_max(ctx, node, args):
    return ctx.set_output(node, [clamped(ctx, args[0].itensor(), None, args["max"].operand())])


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


_COMPARISON_SCHEMAS = {f"aten::{name}{signature}": name for name in _COMPARISONS
                       for signature in (".Tensor(Tensor self, Tensor other) -> Tensor",
                                         ".Scalar(Tensor self, Scalar other) -> Tensor")}


def _comparison(ctx, node, args, name):
    return ctx.set_output(node, [_COMPARISONS[name](ctx, *_operands(args))])


converter_table(_COMPARISON_SCHEMAS, _comparison, "self {} other, a BOOL tensor.")


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


# Only the Tensor forms: a bool Scalar reaches TorchScript as the int 0 or 1 (scripted; tracing one fails), and a
# bool tensor with an int is an int64 bitwise op, which TensorRT lacks.
_BITWISE = {f"aten::{name}.Tensor(Tensor self, Tensor other) -> Tensor": op_name for op_name in ("AND", "OR", "XOR")
            for name in (f"__{op_name.lower()}__", f"bitwise_{op_name.lower()}")}
_LOGICAL = {f"aten::logical_{op_name.lower()}(Tensor self, Tensor other) -> Tensor": op_name
            for op_name in ("AND", "OR", "XOR")}


def _bitwise(ctx, node, args, op_name):
    a, b = _as_bool(ctx, args[0].itensor(), node.kind()), _as_bool(ctx, args[1].itensor(), node.kind())
    return ctx.set_output(node, [_logical(ctx, *broadcast_pair(ctx, a, b), op_name)])


def _logical_op(ctx, node, args, op_name):
    a, b = (_truth(ctx, operand) for operand in _operands(args))
    return ctx.set_output(node, [_logical(ctx, *broadcast_pair(ctx, a, b), op_name)])


converter_table(_BITWISE, _bitwise, "Bitwise {0} of bool tensors (a logical {0}).")
converter_table(_LOGICAL, _logical_op, "Logical {}: nonzero values are true; the result is BOOL.")


@converter("aten::bitwise_not(Tensor self) -> Tensor")
def bitwise_not(ctx, node, args):
    """~self on a bool tensor."""
    return ctx.set_output(node, [_not(ctx, _as_bool(ctx, args[0].itensor(), node.kind()))])


@converter("aten::logical_not(Tensor self) -> Tensor")
def logical_not(ctx, node, args):
    """self == 0, a BOOL tensor."""
    return ctx.set_output(node, [_not(ctx, _truth(ctx, args[0].itensor()))])


_EXTREMA = {
    "aten::maximum(Tensor self, Tensor other) -> Tensor": "MAX",
    "aten::max.other(Tensor self, Tensor other) -> Tensor": "MAX",
    "aten::minimum(Tensor self, Tensor other) -> Tensor": "MIN",
    "aten::min.other(Tensor self, Tensor other) -> Tensor": "MIN",
}


def _extremum(ctx, node, args, op_name):
    """Element-wise MAX or MIN; bool computes in int32 (TensorRT's MAX/MIN refuse BOOL) and is cast back."""
    a, b = _operands(args)
    dtype = promote_types(ctx, a, b)
    compute = torch.int32 if dtype == torch.bool else dtype
    result = elementwise(ctx, a, b, getattr(ctx.trt.ElementWiseOperation, op_name), compute)
    return ctx.set_output(node, [cast(ctx, result, dtype)])


converter_table(_EXTREMA, _extremum, "Element-wise {} of self and other.")


_MODULOS = {  # schema: how the quotient rounds (floor: Python's modulo, with the divisor's sign; trunc: C's fmod)
    "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor": "floor",
    "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor": "floor",
    "aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor": "floor",
    "aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor": "trunc",
    "aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor": "trunc",
}


def _modulo(ctx, node, args, rounding_mode):
    """self - round(self / other) * other of integers, rounding the quotient by `rounding_mode`. A floating-point one
    runs in PyTorch: TensorRT has no exact remainder, and that formula loses it where |self / other| passes the
    float's precision (1e10 % 7 gave 0, eager 4) or self lies near a multiple of other (1.0 % 0.1 gave 0, eager 0.1)."""
    a, b = _operands(args)
    dtype, ops = promote_types(ctx, a, b), ctx.trt.ElementWiseOperation
    if dtype.is_floating_point:
        raise NotImplementedError(f"a {dtype} {node.kind().split('::')[1]}: TensorRT has no exact floating-point "
                                  "remainder, and self - round(self / other) * other loses it")
    a, b = (cast(ctx, v, dtype) if isinstance(v, ctx.trt.ITensor) else v for v in (a, b))
    quotient = _divide(ctx, a, b, rounding_mode)
    return ctx.set_output(node, [elementwise(ctx, a, elementwise(ctx, quotient, b, ops.PROD, dtype), ops.SUB, dtype)])


converter_table(_MODULOS, _modulo, "self - round(self / other) * other, the quotient rounded by {}.")
