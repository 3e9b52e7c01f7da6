"""ICastLayer and IIdentityLayer: dtype conversion and copy."""

import torch

from ..enums import DataType, LayerType, member
from ..network import UINT8_ONLY_CAST, ILayer, check, network_method
from ..types import TORCH_DTYPE

_UINT8_PARTNERS = (DataType.FLOAT, DataType.HALF)


class ICastLayer(ILayer):
    _layer_type = LayerType.CAST
    _attributes = ("to_type",)

    def _check(self, inputs):
        check(self.to_type in TORCH_DTYPE and self.to_type != DataType.FP8,
              f"cast to {self.to_type} is not supported")
        check(inputs[0].dtype != TORCH_DTYPE[DataType.FP8], "cast from FP8 is not supported; use add_dequantize")
        if inputs[0].dtype == torch.uint8:
            check(self.to_type in _UINT8_PARTNERS, f"cast from UINT8 to {self.to_type}: {UINT8_ONLY_CAST}")
        if self.to_type == DataType.UINT8:
            check(inputs[0].dtype in (torch.float32, torch.float16), f"cast from {inputs[0].dtype} to UINT8: "
                  f"{UINT8_ONLY_CAST}")

    def _compute(self, inputs, weights):
        return inputs[0].to(TORCH_DTYPE[self.to_type])


class IIdentityLayer(ILayer):
    _layer_type = LayerType.IDENTITY

    def _compute(self, inputs, weights):
        return inputs[0].clone()


@network_method
def add_cast(self, input, to_type):
    return self._add(ICastLayer, [input], to_type=member(DataType, to_type, "add_cast"))


@network_method
def add_identity(self, input):
    return self._add(IIdentityLayer, [input])
