"""ISliceLayer: strided windows of a tensor; out-of-range reads are handled per SampleMode.

Only static start/shape/stride/axes (Dims) are supported; the optional fill value (input 4) is.
"""

import torch

from ..enums import LayerType, SampleMode
from ..network import ILayer, check, network_method
from ..types import to_dims

_PARAMETERS = ("start", "shape", "stride")
_TENSOR_PARAMETERS = {1: "start", 2: "size", 3: "stride", 5: "axes"}
# A fill value of another dtype is accepted only if TensorRT converts it implicitly: among these.
_CONVERTIBLE = (torch.float32, torch.float16, torch.int8, torch.float8_e4m3fn)


def _positions(size, start, count, stride, mode, dim):
    """Input positions read along one dim; for FILL, out-of-range reads point at `size` (the fill slab)."""
    index = start + stride * torch.arange(count, dtype=torch.int64)
    inside = (index >= 0) & (index < size)
    if mode == SampleMode.FILL:
        return torch.where(inside, index, size)
    if mode == SampleMode.STRICT_BOUNDS:
        if not inside.all():
            bad = int(index[~inside][0])
            raise IndexError(f"slice reads position {bad} of dim {dim} (size {size}) with STRICT_BOUNDS; "
                             "shrink the slice or pick another SampleMode")
        return index
    if count and not size:
        raise IndexError(f"slice with {mode.name} cannot read dim {dim} of size 0 (the output dim must be 0)")
    if mode == SampleMode.WRAP:
        return index.remainder(size)
    if mode == SampleMode.CLAMP:
        return index.clamp(0, size - 1)
    if size == 1:  # REFLECT repeats a single element
        return torch.zeros_like(index)
    period = 2 * size - 2
    folded = index.abs().remainder(period)
    return torch.where(folded >= size, period - folded, folded)


class ISliceLayer(ILayer):
    _layer_type = LayerType.SLICE
    _attributes = ("start", "shape", "stride", "mode", "axes")
    _deferred = False  # True while add_slice infers the output: see add_slice

    def __setattr__(self, key, value):
        if key in ("start", "shape", "stride") or (key == "axes" and value is not None):
            value = to_dims(value, f"ISliceLayer.{key}")
        super().__setattr__(key, value)

    def _check(self, inputs):
        start, shape, stride = (tuple(getattr(self, name)) for name in _PARAMETERS)
        check(len(start) == len(shape) == len(stride), f"slice start {start}, shape {shape} and stride {stride} "
              "must have the same length")
        check(all(n >= 0 for n in shape), f"slice shape {shape} has negative entries")
        if self._deferred:
            return  # the other rules depend on mode, axes and inputs, which converters set after add_slice
        data, rank = inputs[0], inputs[0].dim()
        for index, name in _TENSOR_PARAMETERS.items():
            check(len(inputs) <= index or inputs[index] is None,
                  f"slice {name} given as a tensor (set_input({index})) is not supported by the reference yet; "
                  "set it as Dims")
        check(isinstance(self.mode, SampleMode), f"slice mode must be a SampleMode, got {self.mode!r}")
        self._check_fill(data, inputs[4] if len(inputs) > 4 else None)
        if self.axes is None:
            check(len(start) == rank, f"slice start/shape/stride have {len(start)} entries, need one per input dim "
                  f"({rank})")
            return
        axes = tuple(self.axes)
        check(len(start) == len(axes), f"slice start/shape/stride have {len(start)} entries, need one per axis "
              f"({len(axes)})")
        check(all(-rank <= a < rank for a in axes), f"slice axes {axes} must lie in [{-rank}, {rank - 1}]")
        check(len({a % rank for a in axes}) == len(axes), f"slice axes {axes} repeat an axis")

    def _check_fill(self, data, fill):
        """The fill value (input 4): FILL mode only, a scalar of the data's dtype or one convertible to it."""
        if fill is None:
            return
        check(self.mode == SampleMode.FILL, f"slice fill value (input 4) needs SampleMode.FILL, mode is {self.mode}")
        check(fill.dim() == 0, f"slice fill value must be a 0-D tensor, got shape {tuple(fill.shape)}")
        check(fill.dtype == data.dtype or (fill.dtype in _CONVERTIBLE and data.dtype in _CONVERTIBLE),
              f"slice fill value dtype {fill.dtype} does not convert to the input dtype {data.dtype}")

    def _parameters(self, shape):
        """(start, count, stride) per input dim; dims not named in `axes` are copied whole."""
        if self.axes is None:
            return list(zip(self.start, self.shape, self.stride))
        chosen = {a % len(shape): p for a, p in zip(self.axes, zip(self.start, self.shape, self.stride))}
        return [chosen.get(dim, (0, size, 1)) for dim, size in enumerate(shape)]

    def _compute(self, inputs, weights):
        data = inputs[0]
        if self._deferred and len(self.start) != (data.dim() if self.axes is None else len(self.axes)):
            return data  # a stand-in until axes are set; any change to the network infers again
        mode = SampleMode.FILL if self._deferred else self.mode  # FILL gives the same shape and never refuses
        fill = inputs[4] if len(inputs) > 4 and inputs[4] is not None else torch.zeros((), device=data.device)
        for dim, (start, count, stride) in enumerate(self._parameters(tuple(data.shape))):
            index = _positions(data.shape[dim], start, count, stride, mode, dim)
            if mode == SampleMode.FILL:  # append a slab of fill values for out-of-range reads to land on
                slab = fill.to(data.dtype).expand(data.shape[:dim] + (1,) + data.shape[dim + 1:])
                data = torch.cat([data, slab], dim)
            data = data.index_select(dim, index.to(data.device))
        return data


@network_method
def add_slice(self, input, start, shape, stride):
    # TensorRT checks a slice against its input when it analyses shapes, not in add_slice: converters add the
    # layer, then set mode (FILL to pad, WRAP to roll) or axes. So add_slice infers with those rules deferred,
    # and clears the flag without invalidating that inference: building (or any change) checks them all.
    layer = self._add(ISliceLayer, [input], start=to_dims(start, "add_slice"), shape=to_dims(shape, "add_slice"),
                      stride=to_dims(stride, "add_slice"), mode=SampleMode.STRICT_BOUNDS, axes=None, _deferred=True)
    if layer is not None:
        object.__setattr__(layer, "_deferred", False)
    return layer
