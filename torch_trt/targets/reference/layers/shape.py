"""IShapeLayer: the input's dimensions as a 1-D INT64 tensor."""

import torch

from ..enums import LayerType
from ..network import ILayer, network_method


class IShapeLayer(ILayer):
    _layer_type = LayerType.SHAPE

    def _compute(self, inputs, weights):
        # Shapes are concrete once the engine runs, so the runtime shape is the answer.
        return torch.tensor(tuple(inputs[0].shape), dtype=torch.int64, device=inputs[0].device)


@network_method
def add_shape(self, input):
    return self._add(IShapeLayer, [input])
