"""ISelectLayer: numpy.where over a BOOL condition, with TensorRT's equal-rank broadcasting."""

import torch

from ..enums import LayerType
from ..network import ILayer, check, network_method
from .elementwise import check_broadcast

# Data types TensorRT's select accepts for then/else.
_TYPES = (torch.int32, torch.int64, torch.float16, torch.float32, torch.bfloat16, torch.bool)


class ISelectLayer(ILayer):
    _layer_type = LayerType.SELECT
    _broadcasts = True

    def _check(self, inputs):
        condition, then_input, else_input = inputs
        check(condition.dtype == torch.bool, f"select condition must be BOOL, got {condition.dtype}")
        check_broadcast("select", [condition.shape, then_input.shape, else_input.shape])
        check(then_input.dtype == else_input.dtype, f"select then/else inputs must have the same dtype, got "
              f"{then_input.dtype} and {else_input.dtype}; insert a cast")
        check(then_input.dtype in _TYPES, f"select does not accept {then_input.dtype} then/else inputs")

    def _compute(self, inputs, weights):
        return torch.where(*inputs)


@network_method
def add_select(self, condition, then_input, else_input):
    return self._add(ISelectLayer, [condition, then_input, else_input])
