"""INormalizationLayer: Y = (X - mean) / sqrt(var + epsilon) * scale + bias (layer/instance/group norm).

Statistics run over the `axes` bitmask; with num_groups > 1 the channel dim (dim 1 of [N, C, ...])
is split into groups and each group is normalised over its channels and all later dims.
add_normalization (v1) takes GroupNorm scale/bias per group ([1, G, 1, ...]); add_normalization_v2
takes them per channel ([1, C, 1, ...]).
"""

import torch
import torch.nn.functional as F

from ...dtypes import FLOAT_DTYPES
from ..enums import LayerType
from ..network import ILayer, check, check_deferred, network_method
from .reduce import axes_from_mask


def _check_groups(x, groups, axes):
    """GroupNorm needs [N, C, ...] with G dividing C and axes = exactly the dims after C (NvInfer.h)."""
    shape = tuple(x.shape)
    check(x.dim() >= 3, f"normalization with num_groups {groups} needs an [N, C, ...] input of rank >= 3, got {shape}")
    check(x.shape[1] % groups == 0, f"normalization num_groups {groups} does not divide the {x.shape[1]} channels "
          f"of input {shape}")
    after_channel = ((1 << x.dim()) - 1) & ~0b11
    check(axes == after_channel, f"normalization with num_groups {groups} needs axes {bin(after_channel)} (every dim "
          f"after the channel dim of {shape}), got {bin(axes)}")


def _check_like_input(name, tensor, x):
    """scale/bias must have the input's dtype and rank."""
    check(tensor.dtype == x.dtype, f"normalization {name} dtype {tensor.dtype} differs from input dtype {x.dtype}; "
          "insert a cast")
    check(tensor.dim() == x.dim(), f"normalization {name} {tuple(tensor.shape)} must have the rank of input "
          f"{tuple(x.shape)}")


def _standardize(x, groups, dims, epsilon):
    """(x - mean) / sqrt(var + epsilon), statistics per group (groups > 1) or over `dims`."""
    if groups > 1:
        grouped = x.reshape(x.shape[0], groups, -1)  # a group's channels and all later dims, flattened
        return _standardize(grouped, 1, [2], epsilon).reshape(x.shape)
    var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    return (x - mean) / torch.sqrt(var + epsilon)


def _is_layer_norm(dims, x, scale, bias):
    """Statistics over x's last dims, scale and bias varying only along them: what torch's layer_norm computes."""
    leading = x.dim() - len(dims)
    return bool(dims) and sorted(dims) == list(range(leading, x.dim())) and all(
        d == 1 for tensor in (scale, bias) for d in tensor.shape[:leading])


def _over(tensor, shape):
    """A scale/bias varying only along its last dims (_is_layer_norm) as layer norm's weight of `shape`."""
    if tensor.numel() == shape.numel():
        return tensor.reshape(shape)
    return tensor.reshape(tensor.shape[-len(shape):]).expand(shape)


def _per_channel(tensor, channels):
    """Spread a per-group scale/bias ([1, G, 1, ...], v1 GroupNorm) over the G groups' channels."""
    extent = tensor.shape[1] if tensor.dim() > 1 else 1
    return tensor if extent in (1, channels) else tensor.repeat_interleave(channels // extent, dim=1)


class INormalizationLayer(ILayer):
    _layer_type = LayerType.NORMALIZATION
    _attributes = ("epsilon", "axes", "num_groups")

    is_v2 = property(lambda self: self._is_v2)

    def _affine_target(self, name, tensor, x):
        """The shape scale/bias broadcast to: the input's, with dim 1 = G for v1 GroupNorm (one value per group)."""
        target = list(x.shape)
        if self._is_v2 or x.dim() < 3:
            return target
        extent = tensor.shape[1]
        if self.num_groups > 1:
            target[1] = self.num_groups
        else:  # num_groups can only be set after add_normalization: a per-group scale waits for it
            per_group = extent not in (1, x.shape[1]) and extent and x.shape[1] % extent == 0
            check_deferred(not per_group, f"normalization {name} {tuple(tensor.shape)} holds one value per group of "
                           f"channels of input {tuple(x.shape)}, but num_groups is 1; set num_groups = {extent}")
        return target

    def _check(self, inputs):
        x, scale, bias = inputs
        check(x.dtype in FLOAT_DTYPES, f"normalization needs a float input, got {x.dtype}; insert a cast")
        axes_from_mask(self.axes, x.dim(), "normalization")
        check(self.num_groups >= 1, f"normalization num_groups must be >= 1, got {self.num_groups}")
        if self.num_groups > 1:
            _check_groups(x, self.num_groups, self.axes)
        for name, tensor in (("scale", scale), ("bias", bias)):
            _check_like_input(name, tensor, x)
            target = self._affine_target(name, tensor, x)
            check(all(d in (1, t) for d, t in zip(tensor.shape, target)),
                  f"normalization {name} {tuple(tensor.shape)} does not broadcast to {tuple(target)}")

    def _compute(self, inputs, weights):
        # Computes in the input dtype: strongly typed networks pick the precision by casting the input (NvInfer.h).
        x, scale, bias = inputs
        dims = axes_from_mask(self.axes, x.dim(), "normalization")
        if self.num_groups == 1 and _is_layer_norm(dims, x, scale, bias):  # one kernel, one node to generate code for
            shape = x.shape[x.dim() - len(dims):]
            return F.layer_norm(x, shape, _over(scale, shape), _over(bias, shape), self.epsilon)
        y = _standardize(x, self.num_groups, dims, self.epsilon)
        channels = x.shape[1] if x.dim() > 1 else 1
        return y * _per_channel(scale, channels) + _per_channel(bias, channels)


def _add_normalization(network, input, scale, bias, axesMask, v2):
    return network._add(INormalizationLayer, [input, scale, bias], epsilon=1e-5, axes=int(axesMask), num_groups=1,
                        _is_v2=v2)


@network_method
def add_normalization(self, input, scale, bias, axesMask):
    return _add_normalization(self, input, scale, bias, axesMask, v2=False)


@network_method
def add_normalization_v2(self, input, scale, bias, axesMask):
    return _add_normalization(self, input, scale, bias, axesMask, v2=True)
