"""IGatherLayer: DEFAULT (ONNX Gather), ELEMENT (GatherElements) and ND (GatherND) gathering.

TensorRT documents indices in [0, dim) only; the reference raises at run time on any index outside
that range, negative ones included, rather than wrapping them as PyTorch indexing would.
"""

import math

import torch

from ..enums import GatherMode, LayerType
from ..network import ILayer, check, network_method

_INDEX_TYPES = (torch.int32, torch.int64)
# Data types TensorRT's gather accepts (no UINT8).
_TYPES = (torch.bool, torch.int8, torch.int32, torch.int64, torch.float8_e4m3fn, torch.float16, torch.float32,
          torch.bfloat16)


def _check_range(indices, size, where):
    """Raise when a (real, not meta) index lies outside [0, size)."""
    if indices.is_meta or indices.numel() == 0:
        return
    low, high = int(indices.min()), int(indices.max())
    if low < 0 or high >= size:
        raise RuntimeError(f"gather index {low if low < 0 else high} is out of range [0, {size}) {where}; "
                           "TensorRT does not define negative or out-of-range indices")


def _gather_default(data, indices, axis, batch):
    """ONNX Gather along `axis`; with batch=1 the leading dim of data and indices is paired (broadcast)."""
    if batch:
        size = max(data.shape[0], indices.shape[0])
        data, indices = data.expand(size, *data.shape[1:]), indices.expand(size, *indices.shape[1:])
    lead, tail = data.shape[:axis], data.shape[axis + 1:]
    count = math.prod(indices.shape[batch:])
    flat = indices.reshape(indices.shape[:batch] + (1,) * (axis - batch) + (count,) + (1,) * len(tail))
    gathered = torch.gather(data, axis, flat.expand(lead + (count,) + tail))
    return gathered.reshape(lead + indices.shape[batch:] + tail)


def _gather_nd(data, indices, batch):
    """ONNX GatherND with `batch` leading batch dims: output = indices.shape[:-1] + data.shape[batch + k:]."""
    groups = math.prod(data.shape[:batch])
    data = data.reshape((groups,) + data.shape[batch:])
    points = indices.reshape((groups,) + indices.shape[batch:])
    group = torch.arange(groups, device=data.device).view((groups,) + (1,) * (points.dim() - 2))
    selected = data[(group.expand(points.shape[:-1]),) + tuple(points.unbind(-1))]
    return selected.reshape(indices.shape[:-1] + selected.shape[points.dim() - 1:])


class IGatherLayer(ILayer):
    _layer_type = LayerType.GATHER
    _attributes = ("axis", "num_elementwise_dims", "mode")

    def _check(self, inputs):
        data, indices = inputs
        check(indices.dtype in _INDEX_TYPES, f"gather indices must be INT32 or INT64, got {indices.dtype}")
        check(data.dtype in _TYPES, f"gather does not accept {data.dtype} data")
        check(isinstance(self.mode, GatherMode), f"gather mode must be a GatherMode, got {self.mode!r}")
        {GatherMode.DEFAULT: self._check_default, GatherMode.ELEMENT: self._check_element,
         GatherMode.ND: self._check_nd}[self.mode](tuple(data.shape), tuple(indices.shape))

    def _check_axis(self, rank):
        check(0 <= self.axis < rank, f"gather axis {self.axis} is out of range for data of rank {rank}")

    def _check_default(self, data, indices):
        batch = self.num_elementwise_dims
        check(batch in (0, 1), f"gather DEFAULT needs num_elementwise_dims 0 or 1, got {batch}")
        self._check_axis(len(data))
        if batch:
            check(self.axis >= 1 and len(indices) >= 1, "gather DEFAULT with num_elementwise_dims 1 needs axis >= 1 "
                  "and indices of rank >= 1")
            check(1 in (data[0], indices[0]) or data[0] == indices[0], f"gather elementwise dim of data {data} and "
                  f"indices {indices} is not broadcastable")

    def _check_element(self, data, indices):
        check(self.num_elementwise_dims == 0, "gather ELEMENT needs num_elementwise_dims 0")
        self._check_axis(len(data))
        check(len(indices) == len(data), f"gather ELEMENT indices {indices} must have the rank of data {data}")
        check(all(i <= d for dim, (i, d) in enumerate(zip(indices, data)) if dim != self.axis),
              f"gather ELEMENT indices {indices} exceed data {data} in a dim other than axis {self.axis}")

    def _check_nd(self, data, indices):
        batch = self.num_elementwise_dims
        check(0 <= batch < len(data), f"gather ND needs 0 <= num_elementwise_dims < rank(data), got {batch}")
        check(len(indices) > batch, f"gather ND indices {indices} need rank > num_elementwise_dims ({batch})")
        check(indices[:batch] == data[:batch], f"gather ND elementwise dims of data {data} and indices {indices} "
              "must be equal (no broadcast)")
        check(indices[-1] <= len(data) - batch, f"gather ND indices' last dim ({indices[-1]}) must be a build-time "
              f"constant <= rank(data) - num_elementwise_dims ({len(data) - batch})")

    def _compute(self, inputs, weights):
        data, indices = inputs[0], inputs[1].long()
        if self.mode == GatherMode.ND:
            for j in range(indices.shape[-1]):
                _check_range(indices[..., j], data.shape[self.num_elementwise_dims + j],
                             f"for dim {self.num_elementwise_dims + j} (ND)")
            return _gather_nd(data, indices, self.num_elementwise_dims)
        _check_range(indices, data.shape[self.axis], f"along axis {self.axis}")
        if self.mode == GatherMode.ELEMENT:
            return torch.gather(data, self.axis, indices)
        return _gather_default(data, indices, self.axis, self.num_elementwise_dims)


@network_method
def add_gather(self, input, indices, axis):
    return self._add(IGatherLayer, [input, indices], axis=int(axis), num_elementwise_dims=0, mode=GatherMode.DEFAULT)


@network_method
def add_gather_v2(self, input, indices, mode):
    return self._add(IGatherLayer, [input, indices], axis=0, num_elementwise_dims=0, mode=GatherMode(int(mode)))
