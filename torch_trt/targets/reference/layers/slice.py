"""ISliceLayer: strided windows of a tensor; out-of-range reads are handled per SampleMode.

start, shape (the output size), stride and axes are Dims, or 1-D INT32/INT64 shape tensors given by
set_input(1), (2), (3) and (5) for a slice decided at run time (the attribute then reads None, and setting
it again drops the input). The fill value of SampleMode.FILL may be a tensor (input 4).
"""

import torch

from ..enums import LayerType, SampleMode
from ..network import UINT8_ONLY_CAST, check, check_deferred, network_method
from ..types import to_dims
from .shape import _TensorInputAttributes, check_shape_input, given, keeps_values, shape_values

_PARAMETERS = ("start", "shape", "stride")
_TENSOR_INPUTS = {1: "start", 2: "shape", 3: "stride", 5: "axes"}  # set_input index -> the attribute it replaces
# A fill value of another dtype is accepted only if TensorRT converts it implicitly: among these.
_CONVERTIBLE = (torch.float32, torch.float16, torch.int8, torch.float8_e4m3fn)


def _unreadable(size, start, count, stride, mode, dim):
    """Why `mode` cannot serve these reads along one dim (STRICT_BOUNDS out of range, an empty dim), or None."""
    if not count:
        return None
    first, last = start, start + (count - 1) * stride  # reads are linear, so the ends bound them
    if mode == SampleMode.STRICT_BOUNDS and not (0 <= first < size and 0 <= last < size):
        return (f"slice reads position {first if not 0 <= first < size else last} of dim {dim} (size {size}) with "
                "STRICT_BOUNDS; shrink the slice or pick another SampleMode")
    if mode != SampleMode.FILL and not size:
        return f"slice with {mode.name} cannot read dim {dim} of size 0 (the output dim must be 0)"
    return None


def _positions(size, start, count, stride, mode):
    """Input positions read along one dim; for FILL, out-of-range reads point at `size` (the fill slab)."""
    index = start + stride * torch.arange(count, dtype=torch.int64)
    if mode == SampleMode.FILL:
        return torch.where((index >= 0) & (index < size), index, size)
    if mode == SampleMode.WRAP:
        return index.remainder(size)
    if mode == SampleMode.CLAMP:
        return index.clamp(0, size - 1)
    if mode == SampleMode.REFLECT and size == 1:  # REFLECT repeats a single element
        return torch.zeros_like(index)
    if mode == SampleMode.REFLECT:
        period = 2 * size - 2
        folded = index.abs().remainder(period)
        return torch.where(folded >= size, period - folded, folded)
    return index


class ISliceLayer(_TensorInputAttributes):
    """set_input: 0 data, 1 start, 2 size, 3 stride, 4 fill value, 5 axes (1, 2, 3 and 5: 1-D INT32/INT64 shape
    tensors)."""

    _layer_type = LayerType.SLICE
    _attributes = ("start", "shape", "stride", "mode", "axes")
    _tensor_inputs, _input_count, _kind = _TENSOR_INPUTS, 6, "slice"

    def __setattr__(self, key, value):
        if key in _PARAMETERS or (key == "axes" and value is not None):
            value = to_dims(value, f"ISliceLayer.{key}")
        self._drop_input_replaced_by(key)
        super().__setattr__(key, value)

    def _resolved(self, inputs):
        """start, shape, stride and axes (None: every dim) as tuples, from the Dims or the shape tensors."""
        values = {}
        for index, name in _TENSOR_INPUTS.items():
            tensor = given(inputs, index)
            values[name] = getattr(self, name) if tensor is None else shape_values(tensor, f"slice {name} (input "
                                                                                          f"{index})")
        return [None if values[n] is None else tuple(values[n]) for n in _PARAMETERS + ("axes",)]

    def _check(self, inputs):
        check(inputs[0].dtype != torch.uint8, UINT8_ONLY_CAST)
        for index, name in _TENSOR_INPUTS.items():
            if given(inputs, index) is not None:
                check_shape_input(inputs, index, f"slice {name}")
        start, shape, stride, axes = self._resolved(inputs)
        check(len(start) == len(shape) == len(stride), f"slice start {start}, shape {shape} and stride {stride} "
              "must have the same length")
        check(all(n >= 0 for n in shape), f"slice shape {shape} has negative entries")
        # Converters set mode, axes and the fill value after add_slice: a misfit waits for them, the build refuses.
        data, rank, count = inputs[0], inputs[0].dim(), len(start)
        self._check_fill(data, given(inputs, 4))
        if axes is None:
            check_deferred(count == rank, f"slice start/shape/stride have {count} entries, need one per input dim "
                           f"({rank})")
        else:
            check_deferred(count == len(axes), f"slice start/shape/stride have {count} entries, need one per axis "
                           f"({len(axes)})")
            check_deferred(all(-rank <= a < rank for a in axes), f"slice axes {axes} must lie in [{-rank}, {rank - 1}]")
            check_deferred(len({a % rank for a in axes}) == len(axes), f"slice axes {axes} repeat an axis")
        if any(given(inputs, index) is not None for index in _TENSOR_INPUTS):
            return  # positions decided at run time are checked at run time
        dynamic = [d == -1 for d in self._inputs[0].shape]  # dynamic dims can only be checked at run time
        for dim, parameters in enumerate(self._parameters(tuple(data.shape), start, shape, stride, axes)):
            problem = None if dynamic[dim] else _unreadable(data.shape[dim], *parameters, self.mode, dim)
            check_deferred(problem is None, problem)

    def _check_fill(self, data, fill):
        """The fill value (input 4): FILL mode only, a scalar of the data's dtype or one convertible to it."""
        if fill is None:
            return
        check_deferred(self.mode == SampleMode.FILL,
                       f"slice fill value (input 4) needs SampleMode.FILL, mode is {self.mode}")
        check_deferred(fill.dim() == 0, f"slice fill value must be a 0-D tensor, got shape {tuple(fill.shape)}")
        check_deferred(fill.dtype == data.dtype or (fill.dtype in _CONVERTIBLE and data.dtype in _CONVERTIBLE),
                       f"slice fill value dtype {fill.dtype} does not convert to the input dtype {data.dtype}")

    @staticmethod
    def _parameters(shape, start, size, stride, axes):
        """(start, count, stride) per input dim; dims not named in `axes` are copied whole."""
        if axes is None:
            return list(zip(start, size, stride))
        chosen = {a % len(shape): p for a, p in zip(axes, zip(start, size, stride))}
        return [chosen.get(dim, (0, n, 1)) for dim, n in enumerate(shape)]

    @keeps_values
    def _compute(self, inputs, weights):
        data = inputs[0]
        fill = given(inputs, 4)
        fill = torch.zeros((), device=data.device) if fill is None else fill
        for dim, parameters in enumerate(self._parameters(tuple(data.shape), *self._resolved(inputs))):
            mode, problem = self.mode, _unreadable(data.shape[dim], *parameters, self.mode, dim)
            if problem and not data.is_meta:  # dynamic dims are only checked at run time (_check covers static ones)
                raise IndexError(problem)
            if problem:  # a dynamic dim's probe size: FILL gives the same output shape
                mode = SampleMode.FILL
            start, count, stride = parameters
            if mode == SampleMode.STRICT_BOUNDS and count and stride > 0:  # in range (checked above): a strided view
                if (start, count, stride) != (0, data.shape[dim], 1):
                    data = data[(slice(None),) * dim + (slice(start, start + (count - 1) * stride + 1, stride),)]
                continue
            index = _positions(data.shape[dim], *parameters, mode)
            if mode == SampleMode.FILL:  # append a slab of fill values for out-of-range reads to land on
                slab = fill.to(data.dtype).expand(data.shape[:dim] + (1,) + data.shape[dim + 1:])
                data = torch.cat([data, slab], dim)
            data = data.index_select(dim, index.to(data.device))
        return data


@network_method
def add_slice(self, input, start, shape, stride):
    return self._add(ISliceLayer, [input], start=to_dims(start, "add_slice"), shape=to_dims(shape, "add_slice"),
                     stride=to_dims(stride, "add_slice"), mode=SampleMode.STRICT_BOUNDS, axes=None)
