"""IResizeLayer: nearest, linear and cubic resizing of the innermost dims (ONNX Resize semantics).

The output size comes from `shape` (full-rank Dims), `scales` (one per dim, output = floor(input * scale)) or a
1-D INT32/INT64 shape tensor given by set_input(1) (the `shape` attribute then reads None); setting one clears the
others. Each resized dim maps an output index to an input coordinate through the
coordinate transformation with the ratio L_in / L_out, then samples it: NEAREST rounds per
`nearest_rounding`; LINEAR and CUBIC weigh neighbours, reading out-of-range neighbours at the edge (or
dropping them with `exclude_outside`, renormalizing the cubic weights). Dims are resized one after another
(the filters are separable), in float32.
"""

import math

import numpy as np
import torch

from ...dtypes import FLOAT_DTYPES
from ..enums import (InterpolationMode, LayerType, ResizeCoordinateTransformation, ResizeRoundMode,
                     ResizeSelector)
from ..network import check, network_method
from ..types import to_dims
from .shape import _TensorInputAttributes, check_shape_input, given, shape_values

# How many innermost dims each mode may resize (NvInfer.h).
_MAX_RESIZED_DIMS = {InterpolationMode.NEAREST: 3, InterpolationMode.LINEAR: 3, InterpolationMode.CUBIC: 2}


def _coordinates(out_size, in_size, transformation, selector, device):
    """The input coordinate (float32) each output index of one dim reads."""
    index = torch.arange(out_size, dtype=torch.float32, device=device)
    if out_size == 1 and selector == ResizeSelector.UPPER:
        return torch.zeros_like(index)
    if transformation == ResizeCoordinateTransformation.ALIGN_CORNERS:
        return index * ((in_size - 1) / max(out_size - 1, 1))
    ratio = in_size / out_size
    if transformation == ResizeCoordinateTransformation.ASYMMETRIC:
        return index * ratio
    return (index + 0.5) * ratio - 0.5


def _rounded(x, rounding):
    """Nearest-neighbour index for coordinates `x` per ResizeRoundMode."""
    if rounding == ResizeRoundMode.HALF_UP:
        return torch.floor(x + 0.5)
    if rounding == ResizeRoundMode.HALF_DOWN:
        return torch.ceil(x - 0.5)
    return torch.floor(x) if rounding == ResizeRoundMode.FLOOR else torch.ceil(x)


def _cubic_weights(t, a):
    """Keys' cubic convolution weights (coefficient `a`) of the taps at floor(x) - 1 .. floor(x) + 2."""
    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(x, mode, cubic_coeff):
    """(offsets from floor(x), per-tap weights) of LINEAR or CUBIC sampling at coordinates `x`."""
    t = x - torch.floor(x)
    if mode == InterpolationMode.LINEAR:
        return [0, 1], [1 - t, t]
    return [-1, 0, 1, 2], _cubic_weights(t, cubic_coeff)


def _resize_dim(x, dim, out_size, layer):
    """`x` resized along `dim` to `out_size`."""
    in_size = x.shape[dim]
    coordinates = _coordinates(out_size, in_size, layer.coordinate_transformation,
                               layer.selector_for_single_pixel, x.device)
    view = [1] * x.dim()
    view[dim] = out_size
    if layer.resize_mode == InterpolationMode.NEAREST:
        index = _rounded(coordinates, layer.nearest_rounding).clamp(0, in_size - 1).long()
        return x.index_select(dim, index)
    offsets, weights = _taps(coordinates, layer.resize_mode, layer.cubic_coeff)
    base = torch.floor(coordinates).long()
    positions = [base + offset for offset in offsets]
    if layer.exclude_outside:
        weights = [w * ((p >= 0) & (p < in_size)) for w, p in zip(weights, positions)]
        total = sum(weights)
        weights = [w / total for w in weights]
    samples = [x.index_select(dim, p.clamp(0, in_size - 1)) * w.reshape(view) for p, w in zip(positions, weights)]
    return sum(samples)


class IResizeLayer(_TensorInputAttributes):
    """set_input: 0 data, 1 the output shape (a 1-D INT32/INT64 shape tensor)."""

    _layer_type = LayerType.RESIZE
    _attributes = ("shape", "scales", "resize_mode", "coordinate_transformation", "selector_for_single_pixel",
                   "nearest_rounding", "exclude_outside", "cubic_coeff")
    _tensor_inputs, _input_count, _kind = {1: "shape"}, 2, "resize"

    def __setattr__(self, key, value):
        # The output size is given one way: shape, scales or the shape tensor; setting one clears the others.
        if key == "shape" and value is not None:
            value = to_dims(value, "IResizeLayer.shape")
            object.__setattr__(self, "scales", None)
        elif key == "scales" and value is not None:
            value = [float(np.float32(s)) for s in value]
            object.__setattr__(self, "shape", None)
        if key in ("shape", "scales") and value is not None:
            self._drop_input_replaced_by("shape")
        super().__setattr__(key, value)

    def _output_shape(self, inputs):
        """The output dims, from the shape tensor, `shape` or `scales`."""
        x, shape = inputs[0], given(inputs, 1)
        if shape is not None:
            return list(shape_values(shape, "resize shape (input 1)"))
        if self.shape is not None:
            return list(self.shape)
        return [math.floor(size * scale) for size, scale in zip(x.shape, self.scales)]

    def _check(self, inputs):
        x = inputs[0]
        check(x.dtype in FLOAT_DTYPES, f"resize needs a float input, got {x.dtype}; insert a cast")
        check(x.dim() >= 1, "resize needs an input of rank >= 1")
        if given(inputs, 1) is not None:
            check_shape_input(inputs, 1, "resize shape")
        else:
            check(self.shape is not None or self.scales is not None, "resize needs shape or scales")
        name, stated = (("shape", given(inputs, 1)) if given(inputs, 1) is not None else
                        ("shape", self.shape) if self.shape is not None else ("scales", self.scales))
        check(len(stated) == x.dim(), f"resize {name} of {len(stated)} entries needs one entry per dim of the "
              f"rank-{x.dim()} input")
        check(self.scales is None or all(s > 0 for s in self.scales), f"resize scales {self.scales} must be positive")
        out = self._output_shape(inputs)
        check(all(d > 0 for d in out), f"resize output shape {tuple(out)} has dims < 1")
        limit = _MAX_RESIZED_DIMS[self.resize_mode]
        outer = [d for d in range(x.dim() - limit) if out[d] != x.shape[d]]
        check(not outer, f"{self.resize_mode.name} resize changes dims {outer} of input {tuple(x.shape)} (to "
              f"{tuple(out)}); it only resizes the innermost {limit} dims")

    def _compute(self, inputs, weights):
        x = inputs[0]
        y = x.float()
        for dim, out_size in enumerate(self._output_shape(inputs)):
            if out_size != x.shape[dim]:
                y = _resize_dim(y, dim, out_size, self)
        return y.to(x.dtype)


@network_method
def add_resize(self, input):
    return self._add(IResizeLayer, [input], shape=None, scales=[1.0] * len(input.shape),
                     resize_mode=InterpolationMode.NEAREST,
                     coordinate_transformation=ResizeCoordinateTransformation.ASYMMETRIC,
                     selector_for_single_pixel=ResizeSelector.FORMULA, nearest_rounding=ResizeRoundMode.FLOOR,
                     exclude_outside=False, cubic_coeff=-0.75)
