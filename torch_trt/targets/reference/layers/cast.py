"""ICastLayer and IIdentityLayer: dtype conversion and copy."""


from ..enums import DataType, LayerType
from ..network import ILayer, check, network_method
from ..types import TORCH_DTYPE


class ICastLayer(ILayer):
    _layer_type = LayerType.CAST
    _attributes = ("to_type",)

    def _check(self, inputs):
        check(self.to_type in TORCH_DTYPE and self.to_type != DataType.FP8,
              f"cast to {self.to_type} is not supported")
        check(inputs[0].dtype != TORCH_DTYPE[DataType.FP8], "cast from FP8 is not supported; use add_dequantize")

    def _compute(self, inputs, weights):
        return inputs[0].to(TORCH_DTYPE[self.to_type])


class IIdentityLayer(ILayer):
    _layer_type = LayerType.IDENTITY

    def _compute(self, inputs, weights):
        return inputs[0].clone()


@network_method
def add_cast(self, input, to_type):
    return self._add(ICastLayer, [input], to_type=DataType(int(to_type)))


@network_method
def add_identity(self, input):
    return self._add(IIdentityLayer, [input])
