"""Unary converters: one IUnaryLayer each (exp, log, sqrt, abs, neg, ...), plus rsqrt."""

import torch

from ..conversion.registry import converter, converter_table
from ._helpers import cast, dtype_of

_UNARY = {
    "aten::exp(Tensor self) -> Tensor": "EXP",
    "aten::log(Tensor self) -> Tensor": "LOG",
    "aten::sqrt(Tensor self) -> Tensor": "SQRT",
    "aten::abs(Tensor self) -> Tensor": "ABS",
    "aten::neg(Tensor self) -> Tensor": "NEG",
    "aten::sin(Tensor self) -> Tensor": "SIN",
    "aten::cos(Tensor self) -> Tensor": "COS",
    "aten::erf(Tensor self) -> Tensor": "ERF",
    "aten::floor(Tensor self) -> Tensor": "FLOOR",
    "aten::ceil(Tensor self) -> Tensor": "CEIL",
    "aten::reciprocal(Tensor self) -> Tensor": "RECIP",
}
_FLOAT_ONLY = {"EXP", "LOG", "SQRT", "SIN", "COS", "ERF", "RECIP"}


def _unary(ctx, node, args, op_name):
    x = args[0].itensor()
    if op_name in _FLOAT_ONLY and not dtype_of(ctx, x).is_floating_point:
        x = cast(ctx, x, torch.float32)  # PyTorch promotes integer inputs of these ops to float
    return ctx.set_output(node, ctx.net.add_unary(x, getattr(ctx.trt.UnaryOperation, op_name)))


converter_table(_UNARY, _unary, "Unary")


@converter("aten::rsqrt(Tensor self) -> Tensor")
def rsqrt(ctx, node, args):
    """1 / sqrt(self)."""
    root = ctx.net.add_unary(args[0].itensor(), ctx.trt.UnaryOperation.SQRT).get_output(0)
    return ctx.set_output(node, ctx.net.add_unary(root, ctx.trt.UnaryOperation.RECIP))
