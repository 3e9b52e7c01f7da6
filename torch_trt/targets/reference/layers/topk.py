"""ITopKLayer: the k largest or smallest values along one dim, with their indices (values sorted)."""

import torch

from ...dtypes import FLOAT_DTYPES, INDEX_DTYPES
from ..enums import DataType, LayerType, TopKOperation, member
from ..network import ILayer, check, network_method
from ..types import TORCH_DTYPE
from .reduce import axes_from_mask

MAX_K = 3840
_ACCEPTED = FLOAT_DTYPES + INDEX_DTYPES


class ITopKLayer(ILayer):
    _layer_type = LayerType.TOPK
    _attributes = ("op", "k", "axes", "indices_type")
    _num_outputs = 2

    def _check(self, inputs):
        x = inputs[0]
        check(len(inputs) == 1, "topk with a k tensor (set_input(1)) is not supported by the reference")
        check(x.dtype in _ACCEPTED, f"topk does not accept {x.dtype} input; insert a cast")
        dims = axes_from_mask(self.axes, x.dim(), "topk")
        check(len(dims) == 1, f"topk axes bitmask {bin(self.axes)} must have exactly one bit set")
        check(x.dim() - dims[0] <= 4, f"topk reduces dim {dims[0]} of a rank-{x.dim()} input; TensorRT's TopK only "
              "reduces one of the last 4 dims")
        check(1 <= self.k <= MAX_K, f"topk k must lie in [1, {MAX_K}], got {self.k}")
        check(self.k <= x.shape[dims[0]], f"topk k={self.k} exceeds the size {x.shape[dims[0]]} of dim {dims[0]}")
        check(self.indices_type in (DataType.INT32, DataType.INT64),
              f"topk indices_type must be INT32 or INT64, got {self.indices_type}")

    def _compute(self, inputs, weights):
        (dim,) = axes_from_mask(self.axes, inputs[0].dim(), "topk")
        values, indices = torch.topk(inputs[0], self.k, dim, largest=self.op == TopKOperation.MAX, sorted=True)
        return values, indices.to(TORCH_DTYPE[self.indices_type])


@network_method
def add_topk(self, input, op, k, axes, indices_type=DataType.INT32):
    return self._add(ITopKLayer, [input], op=member(TopKOperation, op, "add_topk"), k=int(k), axes=int(axes),
                     indices_type=member(DataType, indices_type, "add_topk"))
