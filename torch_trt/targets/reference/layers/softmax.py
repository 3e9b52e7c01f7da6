"""ISoftMaxLayer: softmax along the single dim of an `axes` bitmask."""

import torch

from ...dtypes import FLOAT_DTYPES
from ..enums import LayerType
from ..network import ILayer, ITensor, check, network_method
from .reduce import axes_from_mask


def _default_axes(input):
    """TensorRT's default axis: rank-3 for rank >= 3, else 0 (NCHW -> C), as a bitmask."""
    rank = len(input.shape) if isinstance(input, ITensor) else 0  # a non-tensor is refused by _add
    return 1 << max(rank - 3, 0)


class ISoftMaxLayer(ILayer):
    _layer_type = LayerType.SOFTMAX
    _attributes = ("axes",)

    def _check(self, inputs):
        x = inputs[0]
        check(x.dtype in FLOAT_DTYPES, f"softmax needs a float input, got {x.dtype}; insert a cast")
        dims = axes_from_mask(self.axes, x.dim(), "softmax")
        check(len(dims) == 1, f"softmax axes bitmask {bin(self.axes)} must have exactly one bit set")

    def _compute(self, inputs, weights):
        x = inputs[0]
        (dim,) = axes_from_mask(self.axes, x.dim(), "softmax")
        return torch.softmax(x, dim)


@network_method
def add_softmax(self, input):
    return self._add(ISoftMaxLayer, [input], axes=_default_axes(input))
