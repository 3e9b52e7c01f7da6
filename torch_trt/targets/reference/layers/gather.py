"""IGatherLayer: DEFAULT (ONNX Gather), ELEMENT (GatherElements) and ND (GatherND) gathering.

Every mode is written as one read (index_select for a DEFAULT gather without batch dims, an
embedding lookup; broadcast advanced indexing otherwise), so a single check covers the
ranges: TensorRT documents indices in [0, dim) only, and the reference fails at run time on any
read outside that range, negative indices included, rather than wrapping them as PyTorch would.
The check is an asynchronous assert (on CUDA a device-side assert, as PyTorch's own indexing
does), so a gather never waits for the device and its engine can be captured in a CUDA graph.
"""

import torch

from ...dtypes import INDEX_DTYPES
from ..enums import GatherMode, LayerType, member
from ..network import ILayer, check, network_method
from .constant import IConstantLayer
from .shape import keeps_values_if

# Data types TensorRT's gather accepts (no UINT8).
_TYPES = (torch.bool, torch.int8, torch.int32, torch.int64, torch.float8_e4m3fn, torch.float16, torch.float32,
          torch.bfloat16)


def _index(data, subscripts, indexed):
    """data[subscripts], asserting on real tensors that each subscript for a dim in `indexed` (those the layer's
    indices address; the other subscripts are aranges, in range by construction) lies in [0, data.shape[d])."""
    for dim in indexed:
        _assert_in_range(data, subscripts[dim], dim)
    # A leading unit dim keeps 0-D subscripts tensors: PyTorch would read them as Python ints (.item()).
    return data[tuple(subscript.unsqueeze(0) for subscript in subscripts)][0]


def _assert_in_range(data, indices, dim):
    """Assert on real tensors (asynchronously) that `indices` address dim `dim` of data within [0, size)."""
    if not indices.is_meta:
        torch._assert_async(((indices >= 0) & (indices < data.shape[dim])).all(), _out_of_range(data, dim))


def _out_of_range(data, dim):
    return (f"gather reads an index outside [0, {data.shape[dim]}) of dim {dim}; TensorRT does not define negative or "
            "out-of-range indices")


def _along(size, position, rank, device):
    """arange(size) laid along dim `position` of a rank-`rank` result, for broadcast indexing."""
    return torch.arange(size, device=device).view([-1 if d == position else 1 for d in range(rank)])


def _gather_default(data, indices, axis, batch):
    """ONNX Gather on `axis`; with batch=1 the leading dims of data and indices pair up (size 1 broadcasts).

    Without batch dims it is index_select (an embedding lookup): on the CPU, advanced indexing over a broadcast
    arange took 95 times longer for BERT-base's word embeddings."""
    if batch == 0:
        _assert_in_range(data, indices, axis)
        rows = torch.index_select(data, axis, indices.reshape(-1))
        return rows.reshape(data.shape[:axis] + indices.shape + data.shape[axis + 1:])
    size = indices.shape[0] if data.shape[0] == 1 else data.shape[0]
    data, indices = data.expand(size, *data.shape[1:]), indices.expand(size, *indices.shape[1:])
    kept = indices.dim() - batch  # index dims that take the place of data's `axis`
    rank = data.dim() - 1 + kept
    placed = indices.reshape(indices.shape[:batch] + (1,) * (axis - batch) + indices.shape[batch:]
                             + (1,) * (data.dim() - axis - 1))
    subscripts = [placed if d == axis else _along(n, d if d < axis else d - 1 + kept, rank, data.device)
                  for d, n in enumerate(data.shape)]
    return _index(data, subscripts, [axis])


def _overreach(data_shape, indices_shape, axis):
    """The first dim other than `axis` where ELEMENT indices are larger than the data (and read beyond it), or None."""
    return next((d for d, n in enumerate(indices_shape) if d != axis and n > data_shape[d]), None)


def _gather_element(data, indices, axis):
    """ONNX GatherElements: output[J] = data[J with J[axis] replaced by indices[J]]."""
    beyond = _overreach(data.shape, indices.shape, axis)
    if beyond is not None and not indices.is_meta:
        raise RuntimeError(_out_of_range(data, beyond))
    return _index(data, [indices if d == axis else _along(n, d, indices.dim(), data.device)
                         for d, n in enumerate(indices.shape)], [axis])


def _gather_nd(data, indices, batch):
    """ONNX GatherND with `batch` batch dims: output = indices.shape[:-1] + data.shape[batch + k:]."""
    grids = [_along(n, d, indices.dim() - 1, data.device) for d, n in enumerate(indices.shape[:batch])]
    return _index(data, grids + list(indices.unbind(-1)), range(batch, batch + indices.shape[-1]))


class IGatherLayer(ILayer):
    _layer_type = LayerType.GATHER
    _attributes = ("axis", "num_elementwise_dims", "mode")

    def _check(self, inputs):
        data, indices = inputs
        check(indices.dtype in INDEX_DTYPES, f"gather indices must be INT32 or INT64, got {indices.dtype}")
        check(data.dtype in _TYPES, f"gather does not accept {data.dtype} data")
        rules = {GatherMode.DEFAULT: self._check_default, GatherMode.ELEMENT: self._check_element,
                 GatherMode.ND: self._check_nd}
        rules[self.mode](tuple(data.shape), tuple(indices.shape))

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
        # Indices larger than data in a dim other than axis read out of range: a run-time error, like any index.
        check(self.num_elementwise_dims == 0, "gather ELEMENT needs num_elementwise_dims 0")
        self._check_axis(len(data))
        check(len(indices) == len(data), f"gather ELEMENT indices {indices} must have the rank of data {data}")

    def _check_nd(self, data, indices):
        batch = self.num_elementwise_dims
        check(0 <= batch < len(data), f"gather ND needs 0 <= num_elementwise_dims < rank(data), got {batch}")
        check(len(indices) > batch, f"gather ND indices {indices} need rank > num_elementwise_dims ({batch})")
        check(indices[:batch] == data[:batch], f"gather ND elementwise dims of data {data} and indices {indices} "
              "must be equal (no broadcast)")
        check(1 <= indices[-1] <= len(data) - batch, f"gather ND indices' last dim ({indices[-1]}) must be a "
              f"build-time constant in [1, rank(data) - num_elementwise_dims = {len(data) - batch}]")

    def _check_built(self, inputs):
        # Constant indices on static dims are known when building: out-of-range ones are refused there.
        producer = self._inputs[1]._producer
        if not isinstance(producer, IConstantLayer):
            return
        values = torch.from_numpy(producer.weights.numpy().astype("int64")).reshape(tuple(producer.shape))
        static = [d != -1 for d in self._inputs[0].shape]
        for subscripts, dim in self._subscripts(values):
            size = inputs[0].shape[dim]
            if static[dim] and subscripts.numel():
                low, high = int(subscripts.min()), int(subscripts.max())
                check(0 <= low and high < size, f"gather indices hold {low if low < 0 else high}, outside [0, {size}) "
                      f"of data dim {dim} {tuple(inputs[0].shape)}; TensorRT does not define out-of-range indices")

    def _subscripts(self, indices):
        """(subscripts, the data dim they read) for each data dim that `indices` address."""
        if self.mode == GatherMode.ND:
            return [(indices[..., k], self.num_elementwise_dims + k) for k in range(indices.shape[-1])]
        return [(indices, self.axis)]

    def _reads_inside(self, inputs):
        """Whether the gather of host `inputs` reads inside the data only. A gather of shape tensors that does not
        (ELEMENT's on axis 0 of a [1, N] shape tensor, until the converter sets its axis) has no values: its reads
        fail when the engine runs, if it still makes them then."""
        data, indices = inputs
        beyond = self.mode == GatherMode.ELEMENT and _overreach(data.shape, indices.shape, self.axis) is not None
        return not beyond and all(bool(((subscripts >= 0) & (subscripts < data.shape[dim])).all())
                                  for subscripts, dim in self._subscripts(indices))

    # Gathering entries of a shape tensor (one dim of a shape) gives a shape tensor.
    @keeps_values_if(_reads_inside)
    def _compute(self, inputs, weights):
        data, indices = inputs[0], inputs[1].long()
        if self.mode == GatherMode.ND:
            return _gather_nd(data, indices, self.num_elementwise_dims)
        if self.mode == GatherMode.ELEMENT:
            return _gather_element(data, indices, self.axis)
        return _gather_default(data, indices, self.axis, self.num_elementwise_dims)


@network_method
def add_gather(self, input, indices, axis):
    return self._add(IGatherLayer, [input, indices], axis=int(axis), num_elementwise_dims=0, mode=GatherMode.DEFAULT)


@network_method
def add_gather_v2(self, input, indices, mode):
    return self._add(IGatherLayer, [input, indices], axis=0, num_elementwise_dims=0,
                     mode=member(GatherMode, mode, "add_gather_v2"))
