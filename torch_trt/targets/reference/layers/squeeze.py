"""ISqueezeLayer and IUnsqueezeLayer: remove or insert size-1 dims named by a constant axes tensor.

TensorRT needs the axes at build time; the reference reads them from the IConstantLayer that
produces input 1 and records them (normalized, ascending) in `_axes`, which the plan carries:
TensorRT binds no attribute for them, but the engine needs them to infer shapes on meta tensors.
"""

import torch

from ..enums import LayerType
from ..network import ILayer, check, network_method
from ..types import Dims
from .constant import IConstantLayer


def _constant_axes(layer, inputs, kind):
    """The axes values from input 1, or None when it is absent."""
    axes = inputs[1] if len(inputs) > 1 else None
    if axes is None:
        return None
    check(axes.dtype in (torch.int32, torch.int64) and axes.dim() == 1,
          f"{kind} axes must be a 1-D INT32/INT64 tensor, got {axes.dtype} of shape {tuple(axes.shape)}")
    producer = layer._inputs[1]._producer
    check(isinstance(producer, IConstantLayer), f"{kind} axes must be the output of an IConstantLayer (a build-time "
          "constant); axes computed by other layers or given as network inputs are not supported by the reference")
    return [int(a) for a in producer.weights.numpy()]


def _normalize(axes, rank, kind):
    """Axes in [-rank, rank) as distinct non-negative dims, ascending."""
    check(all(-rank <= a < rank for a in axes), f"{kind} axes {axes} must lie in [{-rank}, {rank - 1}]")
    dims = sorted(a % rank for a in axes)
    check(len(set(dims)) == len(dims), f"{kind} axes {axes} name a dim more than once")
    return dims


def _record(layer, axes):
    # object.__setattr__: recording resolved axes is not a user edit, so the network must not be marked changed.
    object.__setattr__(layer, "_axes", axes)


class ISqueezeLayer(ILayer):
    _layer_type = LayerType.SQUEEZE
    _attributes = ("_axes",)  # not a TensorRT attribute: resolved at build time, serialized for the engine

    def _check(self, inputs):
        shape, values = tuple(inputs[0].shape), _constant_axes(self, inputs, "squeeze")
        if values is None:  # squeeze the dims that are statically 1; dynamic dims stand as probe sizes, never 1
            axes = [d for d, n in enumerate(shape) if n == 1]
        else:
            axes = _normalize(values, len(shape), "squeeze")
        for dim in axes:
            check(shape[dim] == 1, f"squeeze axis {dim} of shape {shape} has size {shape[dim]}, not 1")
        _record(self, axes)

    def _compute(self, inputs, weights):
        return inputs[0].reshape([n for d, n in enumerate(inputs[0].shape) if d not in self._axes])


class IUnsqueezeLayer(ILayer):
    _layer_type = LayerType.UNSQUEEZE
    _attributes = ("_axes",)  # not a TensorRT attribute: resolved at build time, serialized for the engine

    def _check(self, inputs):
        values = _constant_axes(self, inputs, "unsqueeze")
        check(values is not None, "unsqueeze needs an axes tensor")
        rank = inputs[0].dim() + len(values)
        check(rank <= Dims.MAX_DIMS, f"unsqueeze output rank {rank} exceeds {Dims.MAX_DIMS}")
        _record(self, _normalize(values, rank, "unsqueeze"))

    def _compute(self, inputs, weights):
        shape = list(inputs[0].shape)
        for dim in self._axes:  # ascending, so each 1 lands at its final position
            shape.insert(dim, 1)
        return inputs[0].reshape(shape)


@network_method
def add_squeeze(self, input, axes=None):
    return self._add(ISqueezeLayer, [input] if axes is None else [input, axes])


@network_method
def add_unsqueeze(self, input, axes):
    return self._add(IUnsqueezeLayer, [input, axes])
