"""IConstantLayer: a tensor of weights baked into the engine; a small one is a shape tensor too (shape.py)."""

import torch

from ..enums import DataType, LayerType
from ..network import ILayer, check, network_method
from ..types import TORCH_DTYPE, Weights, to_dims, to_weights, volume
from .shape import SHAPE_TENSOR_VOLUME, known


class IConstantLayer(ILayer):
    _layer_type = LayerType.CONSTANT
    _attributes = ("weights", "shape")
    _weight_attributes = ("weights",)

    def _check(self, inputs):
        check(self.weights.dtype not in (DataType.BOOL, DataType.UINT8),
              "constant weights cannot be BOOL or UINT8; make INT32 weights and add a cast")
        check(volume(self.shape) > 0, f"constant shape {tuple(self.shape)} has zero volume, which add_constant "
              "refuses; slice a one-element constant empty instead")
        check(self.weights.size == volume(self.shape),
              f"constant weights hold {self.weights.size} values but shape {tuple(self.shape)} needs "
              f"{volume(self.shape)}")

    def _compute(self, inputs, weights):
        values = weights["weights"]
        if values is None:  # zero-volume weights during shape inference
            return torch.empty(tuple(self.shape), dtype=TORCH_DTYPE[self.weights.dtype], device="meta")
        if values.is_meta and volume(self.shape) <= SHAPE_TENSOR_VOLUME:  # shape inference: a small constant
            shape = tuple(self.shape)
            return known(values.reshape(shape), self._host_values().reshape(shape))  # may be a shape tensor
        return values.reshape(tuple(self.shape))

    def _host_values(self):
        """The weights as a host tensor: Weights in a network, a tensor in a restored engine."""
        return self.weights._as_torch() if isinstance(self.weights, Weights) else self.weights


@network_method
def add_constant(self, shape, weights):
    return self._add(IConstantLayer, [], shape=to_dims(shape, "add_constant"),
                     weights=to_weights(weights, "add_constant"))
