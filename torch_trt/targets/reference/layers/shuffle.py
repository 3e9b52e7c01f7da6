"""IShuffleLayer: first transpose, reshape (0 copies, -1 infers), second transpose."""

import math

import torch

from ..enums import LayerType
from ..network import UINT8_ONLY_CAST, ILayer, check, network_method
from ..types import Dims, Permutation


def _permute(tensor, permutation):
    order = tuple(permutation)[:tensor.dim()]
    check(sorted(order) == list(range(tensor.dim())), f"{order} is not a permutation of rank {tensor.dim()}")
    return tensor.permute(order)


def reshape_target(shape, dims, zero_is_placeholder):
    """Resolve TensorRT's reshape dims (0 = copy the input dim, -1 = infer) against `shape`."""
    check(list(dims).count(-1) <= 1, f"reshape_dims {tuple(dims)} has more than one -1")
    check(not zero_is_placeholder or all([d != 0 or i < len(shape) for i, d in enumerate(dims)]),
          f"reshape_dims {tuple(dims)} copies with 0 a dim past the input's rank {len(shape)} (zero_is_placeholder)")
    resolved = [shape[i] if d == 0 and zero_is_placeholder else d for i, d in enumerate(dims)]
    check(all([d == -1 or d >= 0 for d in resolved]), f"reshape_dims {tuple(dims)} has negative entries")
    known = math.prod([d for d in resolved if d != -1])
    if -1 in resolved:
        check(known != 0 and math.prod(shape) % known == 0,
              f"cannot reshape {tuple(shape)} to {tuple(dims)}: volume not divisible")
        resolved[resolved.index(-1)] = math.prod(shape) // known
    check(math.prod(resolved) == math.prod(shape),
          f"reshape of {tuple(shape)} to {tuple(dims)} changes the volume")
    return resolved


class IShuffleLayer(ILayer):
    _layer_type = LayerType.SHUFFLE
    _attributes = ("first_transpose", "reshape_dims", "second_transpose", "zero_is_placeholder")

    def __setattr__(self, key, value):
        if key in ("first_transpose", "second_transpose"):
            value = Permutation(value)
        elif key == "reshape_dims":
            value = Dims(value)
        super().__setattr__(key, value)

    def _check(self, inputs):
        check(inputs[0].dtype != torch.uint8, UINT8_ONLY_CAST)

    def _compute(self, inputs, weights):
        tensor = _permute(inputs[0], self.first_transpose)
        if self.reshape_dims is not None:
            tensor = tensor.reshape(reshape_target(tensor.shape, self.reshape_dims, self.zero_is_placeholder))
        return _permute(tensor, self.second_transpose)


@network_method
def add_shuffle(self, input):
    identity = Permutation(range(8))
    return self._add(IShuffleLayer, [input], first_transpose=identity, reshape_dims=None,
                     second_transpose=identity, zero_is_placeholder=True)
