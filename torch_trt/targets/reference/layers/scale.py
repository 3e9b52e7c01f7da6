"""IScaleLayer: (x * scale + shift) ** power with uniform, per-channel or per-element Weights."""

import math

import torch

from ...dtypes import FLOAT_DTYPES
from ..enums import LayerType, ScaleMode as Mode, member
from ..network import ILayer, ITensor, check, network_method
from ..types import TORCH_DTYPE, to_weights

_WEIGHTS = ("shift", "scale", "power")


def _coefficient_shape(shape, mode, channel_axis):
    """The shape Weights take for `mode`, aligned to the input's trailing dims for broadcasting."""
    if mode == Mode.UNIFORM:
        return ()
    if mode == Mode.CHANNEL:
        return (shape[channel_axis],) + (1,) * (len(shape) - channel_axis - 1)
    return tuple(shape[channel_axis:])


class IScaleLayer(ILayer):
    _layer_type = LayerType.SCALE
    _attributes = ("mode", "shift", "scale", "power", "channel_axis")
    _weight_attributes = _WEIGHTS

    def _check(self, inputs):
        x = inputs[0]
        check(x.dtype in FLOAT_DTYPES, f"scale needs a float input, got {x.dtype}; insert a cast")
        check(x.dim() >= 4, f"scale needs an input of rank >= 4 (NvInfer.h), got {tuple(x.shape)}")
        check(0 <= self.channel_axis < x.dim(), f"scale channel_axis {self.channel_axis} is outside input "
              f"{tuple(x.shape)}")
        count = math.prod(_coefficient_shape(x.shape, self.mode, self.channel_axis))
        for name in _WEIGHTS:
            weights = getattr(self, name)
            if weights is None or weights.size == 0:
                continue  # empty Weights mean the default: shift 0, scale 1, power 1
            check(TORCH_DTYPE[weights.dtype] == x.dtype, f"scale {name} weights are {weights.dtype.name} but the "
                  f"input is {x.dtype}; weights must match the input dtype")
            check(weights.size == count, f"scale {self.mode.name} {name} needs {count} weights for input "
                  f"{tuple(x.shape)} (channel_axis {self.channel_axis}), got {weights.size}")

    def _compute(self, inputs, weights):
        x = inputs[0]
        shape = _coefficient_shape(x.shape, self.mode, self.channel_axis)
        # The engine leaves empty Weights out of `weights`; shape inference passes them as None.
        shift, scale, power = (weights.get(name) for name in _WEIGHTS)
        if scale is not None:
            x = x * scale.reshape(shape)
        if shift is not None:
            x = x + shift.reshape(shape)
        return x if power is None else torch.pow(x, power.reshape(shape))


def _add_scale(network, what, input, mode, shift, scale, power, channel_axis):
    return network._add(IScaleLayer, [input], mode=member(Mode, mode, what), shift=to_weights(shift, what),
                        scale=to_weights(scale, what), power=to_weights(power, what), channel_axis=int(channel_axis))


@network_method
def add_scale(self, input, mode, shift=None, scale=None, power=None):
    # The channel is the C of NCHW: dim rank-3 (a non-tensor input is refused by _add).
    channel_axis = len(input.shape) - 3 if isinstance(input, ITensor) else 0
    return _add_scale(self, "add_scale", input, mode, shift, scale, power, channel_axis)


@network_method
def add_scale_nd(self, input, mode, shift=None, scale=None, power=None, channel_axis=None):
    # channel_axis has no default in TensorRT although it follows defaulted arguments.
    if channel_axis is None:
        raise TypeError("add_scale_nd(): incompatible function arguments: channel_axis is required")
    return _add_scale(self, "add_scale_nd", input, mode, shift, scale, power, channel_axis)
