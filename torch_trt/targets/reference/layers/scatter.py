"""IScatterLayer in ELEMENT mode (ONNX ScatterElements): data with `updates` written at `indices` along `axis`.

Only ELEMENT mode is implemented; an ND-mode layer is refused with a message saying so. TensorRT's C++
header documents INT32 indices; like the gather, an index outside [0, dim) fails at run time (an
asynchronous assert, so the layer never waits for the device).
"""

import torch

from ..enums import LayerType, ScatterMode, member
from ..network import ILayer, check, check_deferred, network_method

# Data types TensorRT's scatter accepts for data and updates.
_TYPES = (torch.bool, torch.int8, torch.int32, torch.int64, torch.float16, torch.float32, torch.bfloat16)


class IScatterLayer(ILayer):
    _layer_type = LayerType.SCATTER
    _attributes = ("axis", "mode")

    def _check(self, inputs):
        data, indices, updates = inputs
        check(indices.dtype == torch.int32, f"scatter indices must be INT32, got {indices.dtype}; insert a cast")
        check(data.dtype in _TYPES, f"scatter does not accept {data.dtype} data")
        check(updates.dtype == data.dtype, f"scatter updates ({updates.dtype}) must have the data's dtype "
              f"({data.dtype}); insert a cast")
        # first: the ELEMENT rules below would refuse a valid ND scatter with a message about ELEMENT mode
        check_deferred(self.mode == ScatterMode.ELEMENT, "the reference implements scatter in ELEMENT mode only")
        check(data.dim() >= 1, "scatter ELEMENT needs data of rank >= 1")
        check(indices.dim() == data.dim(), f"scatter ELEMENT indices {tuple(indices.shape)} must have the rank of "
              f"data {tuple(data.shape)}")
        check(tuple(updates.shape) == tuple(indices.shape), f"scatter ELEMENT updates {tuple(updates.shape)} must "
              f"have the shape of indices {tuple(indices.shape)}")
        check_deferred(0 <= self.axis < data.dim(), f"scatter axis {self.axis} is out of range for data of rank "
                       f"{data.dim()}")

    def _compute(self, inputs, weights):
        data, indices, updates = inputs
        indices = indices.long()
        if not indices.is_meta:
            torch._assert_async(((indices >= 0) & (indices < data.shape[self.axis])).all(),
                                f"scatter writes an index outside [0, {data.shape[self.axis]}) of axis {self.axis}; "
                                "TensorRT does not define negative or out-of-range indices")
        return torch.scatter(data, self.axis, indices, updates)


@network_method
def add_scatter(self, data, indices, updates, mode):
    return self._add(IScatterLayer, [data, indices, updates], axis=0, mode=member(ScatterMode, mode, "add_scatter"))
