"""IUnaryLayer: element-wise unary operations."""

import torch

from ...dtypes import FLOAT_DTYPES, INDEX_DTYPES
from ..enums import LayerType, UnaryOperation as Op, member
from ..network import ILayer, check, network_method

_OPS = {
    Op.EXP: torch.exp, Op.LOG: torch.log, Op.SQRT: torch.sqrt, Op.RECIP: torch.reciprocal, Op.ABS: torch.abs,
    Op.NEG: torch.neg, Op.SIN: torch.sin, Op.COS: torch.cos, Op.TAN: torch.tan, Op.SINH: torch.sinh,
    Op.COSH: torch.cosh, Op.ASIN: torch.asin, Op.ACOS: torch.acos, Op.ATAN: torch.atan, Op.ASINH: torch.asinh,
    Op.ACOSH: torch.acosh, Op.ATANH: torch.atanh, Op.CEIL: torch.ceil, Op.FLOOR: torch.floor, Op.ERF: torch.erf,
    Op.NOT: torch.logical_not, Op.SIGN: torch.sign, Op.ROUND: torch.round, Op.ISINF: torch.isinf,
    Op.ISNAN: torch.isnan,
}
# Which input dtypes TensorRT accepts per operation; float-only unless listed (NEG, FLOOR, CEIL, ROUND included:
# NvInfer.h IUnaryLayer; negate an integer as 0 - x, and integer rounding is the identity). int8 is a quantized
# type, usable only between Q/DQ layers.
_ACCEPTS = {Op.NOT: (torch.bool,), Op.ABS: FLOAT_DTYPES + INDEX_DTYPES,
            Op.SIGN: FLOAT_DTYPES + INDEX_DTYPES}


class IUnaryLayer(ILayer):
    _layer_type = LayerType.UNARY
    _attributes = ("op",)

    def _check(self, inputs):
        accepted = _ACCEPTS.get(self.op, FLOAT_DTYPES)
        check(inputs[0].dtype in accepted, f"unary {self.op.name} does not accept {inputs[0].dtype} input")

    def _compute(self, inputs, weights):
        return _OPS[self.op](inputs[0])


@network_method
def add_unary(self, input, op):
    return self._add(IUnaryLayer, [input], op=member(Op, op, "add_unary"))
