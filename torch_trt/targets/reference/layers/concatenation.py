"""IConcatenationLayer: join tensors of equal rank and dtype along one axis."""

import torch

from ..enums import LayerType
from ..network import ILayer, ITensor, check, check_deferred, network_method

# Data types TensorRT's concatenation accepts (no UINT8, no FP8).
_TYPES = (torch.bool, torch.int8, torch.int32, torch.int64, torch.float16, torch.float32, torch.bfloat16)


def _default_axis(inputs):
    """TensorRT's default axis: rank-3 for rank >= 3, else 0 (taken from the first input)."""
    first = inputs[0] if inputs else None
    return max(0, len(first.shape) - 3) if isinstance(first, ITensor) else 0


def _joinable(shapes, axis):
    """Whether `axis` is a dim of the shapes and they agree in every other dim."""
    return 0 <= axis < len(shapes[0]) and len({s[:axis] + s[axis + 1:] for s in shapes}) == 1


class IConcatenationLayer(ILayer):
    _layer_type = LayerType.CONCATENATION
    _attributes = ("axis",)

    def _check(self, inputs):
        check(inputs, "concatenation needs at least one input")
        shapes, rank = [tuple(t.shape) for t in inputs], inputs[0].dim()
        check(all(len(s) == rank for s in shapes), f"concatenation inputs must have the same rank, got {shapes}")
        check(len({t.dtype for t in inputs}) == 1, f"concatenation inputs must have the same dtype, got "
              f"{[t.dtype for t in inputs]}; insert a cast")
        check(inputs[0].dtype in _TYPES, f"concatenation does not accept {inputs[0].dtype} inputs")

        # Converters set axis after add_concatenation: a misfit waits for it, and the build refuses if it stays.
        check_deferred(0 <= self.axis < rank, f"concatenation axis {self.axis} is out of range for rank {rank}")
        check_deferred(_joinable(shapes, self.axis), f"concatenation inputs {shapes} differ in a dim other than axis "
                       f"{self.axis}")

    def _compute(self, inputs, weights):
        return torch.cat(inputs, self.axis)


@network_method
def add_concatenation(self, inputs):
    inputs = list(inputs)
    return self._add(IConcatenationLayer, inputs, axis=_default_axis(inputs))
