"""IActivationLayer: element-wise activations with TensorRT's alpha/beta meanings."""

import torch
import torch.nn.functional as F

from ...dtypes import FLOAT_DTYPES
from ..enums import ActivationType, LayerType, member
from ..network import ILayer, check, network_method

# NvInfer.h (IActivationLayer): "Int32 and Int64 are valid only for kRELU"; int8 is a quantized type (Q/DQ only).
_INTEGER_RELU = (torch.int32, torch.int64)

_ACTIVATIONS = {
    ActivationType.RELU: lambda x, a, b: torch.relu(x),
    ActivationType.SIGMOID: lambda x, a, b: torch.sigmoid(x),
    ActivationType.TANH: lambda x, a, b: torch.tanh(x),
    ActivationType.LEAKY_RELU: lambda x, a, b: torch.where(x >= 0, x, x * a),
    ActivationType.ELU: lambda x, a, b: torch.where(x >= 0, x, a * torch.expm1(x)),
    ActivationType.SELU: lambda x, a, b: torch.where(x > 0, b * x, b * a * torch.expm1(x)),
    ActivationType.SOFTSIGN: lambda x, a, b: x / (1 + x.abs()),
    ActivationType.SOFTPLUS: lambda x, a, b: a * F.softplus(b * x),
    ActivationType.CLIP: lambda x, a, b: torch.clamp(x, max=b).clamp(min=a),  # max(a, min(b, x)): a wins if a > b
    ActivationType.HARD_SIGMOID: lambda x, a, b: torch.clamp(a * x + b, 0, 1),
    ActivationType.SCALED_TANH: lambda x, a, b: a * torch.tanh(b * x),
    ActivationType.THRESHOLDED_RELU: lambda x, a, b: torch.where(x > a, x, torch.zeros_like(x)),
    ActivationType.GELU_ERF: lambda x, a, b: F.gelu(x),
    ActivationType.GELU_TANH: lambda x, a, b: F.gelu(x, approximate="tanh"),
}


class IActivationLayer(ILayer):
    _layer_type = LayerType.ACTIVATION
    _attributes = ("type", "alpha", "beta")

    # IActivationLayer.type is the activation kind, shadowing ILayer.type as in TensorRT.
    type = property(lambda self: self._activation, lambda self, value: self.__setattr__("_activation", value))

    def _check(self, inputs):
        accepted = FLOAT_DTYPES + _INTEGER_RELU if self._activation == ActivationType.RELU else FLOAT_DTYPES
        check(inputs[0].dtype in accepted, f"activation {self._activation.name} needs a float input"
              f"{' (or INT32/INT64)' if self._activation == ActivationType.RELU else ''}, got {inputs[0].dtype}")

    def _compute(self, inputs, weights):
        return _ACTIVATIONS[self._activation](inputs[0], self.alpha, self.beta)


@network_method
def add_activation(self, input, type):
    return self._add(IActivationLayer, [input], _activation=member(ActivationType, type, "add_activation"), alpha=0.0,
                     beta=0.0)
