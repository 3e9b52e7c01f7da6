"""IAssertionLayer: a condition on shapes that must hold, with the message a failure reports. No outputs.

The condition is a BOOL shape tensor (computed from tensor shapes and constants). Where no dynamic dim reaches it
the builder checks it and refuses a false one; else the engine checks it at each new set of input shapes, before it
runs, and reports the message as an error: the output shapes are then unknown (-1) and execution fails.
"""

import torch

from ..enums import LayerType
from ..network import ILayer, check, network_method
from .shape import SHAPE_TENSOR_VOLUME, knows_values


class IAssertionLayer(ILayer):
    _layer_type = LayerType.ASSERTION
    _attributes = ("message",)
    _num_outputs = 0

    def _check(self, inputs):
        condition = inputs[0]
        check(condition.dtype == torch.bool and condition.dim() <= 1 and knows_values(condition),
              f"assertion condition must be a BOOL shape tensor of at most {SHAPE_TENSOR_VOLUME} elements, computed "
              f"from tensor shapes and constants (not tensor data); got {condition.dtype} of shape "
              f"{tuple(condition.shape)}")

    def _check_at_run(self, inputs):
        check(bool(inputs[0].host_values.all()), f"{self.name}: assertion failed: {self.message}")

    def _compute(self, inputs, weights):
        return ()


@network_method
def add_assertion(self, condition, message):
    return self._add(IAssertionLayer, [condition], message=str(message))
