"""IElementWiseLayer: binary operations with TensorRT's equal-rank, size-1 broadcasting rule."""

import torch

from ..enums import ElementWiseOperation as Op, LayerType, member
from ..network import ILayer, check, network_method

_LOGICAL = {Op.AND: torch.logical_and, Op.OR: torch.logical_or, Op.XOR: torch.logical_xor}
_COMPARE = {Op.EQUAL: torch.eq, Op.GREATER: torch.gt, Op.LESS: torch.lt}


def _floor_divide(a, b):
    """Division rounded down, as PyTorch's kernel gives it: NaN for an infinite dividend over a nonzero divisor (over
    0, an infinity), and for a finite nonzero one over an infinite divisor, -1 where their signs differ, else 0
    (a NaN one gives NaN).
    Written out because code generation computes floor(a / b) (inf, and -0.0 for -1 / inf), and an engine's results
    must not depend on its optimization level."""
    quotient = torch.div(a, b, rounding_mode="floor")
    if not quotient.is_floating_point():
        return quotient
    past_infinity = torch.where((a < 0) != (b < 0), -1.0, 0.0).to(quotient.dtype)
    quotient = torch.where(torch.isinf(b) & (a != 0) & ~torch.isnan(a), past_infinity, quotient)
    return torch.where(torch.isinf(a) & (b != 0), torch.nan, quotient)


_ARITHMETIC = {
    Op.SUM: torch.add, Op.PROD: torch.mul, Op.MAX: torch.maximum, Op.MIN: torch.minimum, Op.SUB: torch.sub,
    Op.POW: torch.pow, Op.FLOOR_DIV: _floor_divide,
    # Integer DIV truncates toward zero (C semantics), float DIV is true division.
    Op.DIV: lambda a, b: torch.div(a, b) if a.is_floating_point() else torch.div(a, b, rounding_mode="trunc"),
}


def check_broadcast(kind, shapes):
    """TensorRT's rule for multi-input element-wise layers: equal ranks, each dim equal or 1."""
    check(len({len(s) for s in shapes}) == 1, f"{kind} inputs must have the same rank, got shapes "
          f"{[tuple(s) for s in shapes]}; insert a shuffle to add leading 1s")
    for dims in zip(*shapes):
        sizes = {d for d in dims if d != 1}
        check(len(sizes) <= 1, f"{kind} input dims {[tuple(s) for s in shapes]} are not broadcastable")


# UINT8 only enters and leaves networks through casts; FP8 computes only through Q/DQ layers.
# int8 is a quantized type in TensorRT: arithmetic on it needs Q/DQ layers, so it is refused like uint8.
_TYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool)


class IElementWiseLayer(ILayer):
    _layer_type = LayerType.ELEMENTWISE
    _broadcasts = True
    _attributes = ("op",)

    def _check(self, inputs):
        a, b = inputs
        check_broadcast("elementwise", [a.shape, b.shape])
        check(a.dtype == b.dtype, f"elementwise {self.op.name} inputs must have the same dtype, got {a.dtype} and "
              f"{b.dtype}; insert a cast")
        check(a.dtype in _TYPES, f"elementwise does not accept {a.dtype} inputs; cast them first")
        if self.op in _LOGICAL:
            check(a.dtype == torch.bool, f"elementwise {self.op.name} needs BOOL inputs, got {a.dtype}")
        else:
            check(a.dtype != torch.bool, f"elementwise {self.op.name} does not accept BOOL inputs")
        if self.op == Op.POW:
            check(a.is_floating_point(), f"elementwise POW needs float inputs, got {a.dtype}")

    def _compute(self, inputs, weights):
        a, b = inputs
        table = _LOGICAL if self.op in _LOGICAL else _COMPARE if self.op in _COMPARE else _ARITHMETIC
        result = table[self.op](a, b)
        return result if self.op in _LOGICAL or self.op in _COMPARE else result.to(a.dtype)


@network_method
def add_elementwise(self, input1, input2, op):
    return self._add(IElementWiseLayer, [input1, input2], op=member(Op, op, "add_elementwise"))
