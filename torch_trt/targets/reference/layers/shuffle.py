"""IShuffleLayer: first transpose, reshape (0 copies, -1 infers), second transpose.

The reshape dims are `reshape_dims`, or a 1-D INT32/INT64 shape tensor given by set_input(1) for a reshape to
a runtime shape (its 0 and -1 read as reshape_dims' do); then reshape_dims reads None, and setting it again
drops input 1.
"""

import math

import torch

from ..enums import LayerType, Severity
from ..network import UINT8_ONLY_CAST, ILayer, check, network_method
from ..types import Dims, Permutation
from .shape import check_shape_input, given, shape_values


def _permute(tensor, permutation):
    order, identity = tuple(permutation)[:tensor.dim()], tuple(range(tensor.dim()))
    check(sorted(order) == list(identity), f"{order} is not a permutation of rank {tensor.dim()}")
    return tensor if order == identity else tensor.permute(order)  # no node for the generated program to carry


def reshape_target(shape, dims, zero_is_placeholder, exact=True):
    """Resolve TensorRT's reshape dims (0 = copy the input dim, -1 = infer) against `shape`; not `exact`: leave the
    volume to be checked at run time, a -1 taking the whole part of the quotient."""
    check(list(dims).count(-1) <= 1, f"reshape_dims {tuple(dims)} has more than one -1")
    check(not zero_is_placeholder or all([d != 0 or i < len(shape) for i, d in enumerate(dims)]),
          f"reshape_dims {tuple(dims)} copies with 0 a dim past the input's rank {len(shape)} (zero_is_placeholder)")
    resolved = [shape[i] if d == 0 and zero_is_placeholder else d for i, d in enumerate(dims)]
    check(all([d == -1 or d >= 0 for d in resolved]), f"reshape_dims {tuple(dims)} has negative entries")
    known = math.prod([d for d in resolved if d != -1])
    if -1 in resolved:
        check(known != 0 and (math.prod(shape) % known == 0 or not exact),
              f"cannot reshape {tuple(shape)} to {tuple(dims)}: volume not divisible")
        resolved[resolved.index(-1)] = math.prod(shape) // known
    check(math.prod(resolved) == math.prod(shape) or not exact,
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
            del self._inputs[1:]  # static reshape dims replace the shape tensor
        super().__setattr__(key, value)

    def set_input(self, index, tensor):
        """0: the data (or shape tensor) to shuffle; 1: the reshape dims as a 1-D INT32/INT64 shape tensor."""
        if index not in (0, 1):
            self._network._log(Severity.ERROR, f"{self.name}: set_input({index}): a shuffle takes inputs 0 and 1")
            return
        super().set_input(index, tensor)
        if index == 1:
            object.__setattr__(self, "reshape_dims", None)  # as in TensorRT, the static dims read None

    def _check(self, inputs):
        check(inputs[0].dtype != torch.uint8, UINT8_ONLY_CAST)
        if given(inputs, 1) is not None:
            check_shape_input(inputs, 1, "shuffle reshape dims")

    def _compute(self, inputs, weights):
        tensor = _permute(inputs[0], self.first_transpose)
        shape = given(inputs, 1)
        dims = self.reshape_dims if shape is None else shape_values(shape, "shuffle reshape dims (input 1)")
        if dims is not None and self._volume_known_at_run_time(shape):
            return _permute(tensor.new_empty(reshape_target(tensor.shape, dims, self.zero_is_placeholder, False)),
                            self.second_transpose)
        if dims is not None:
            tensor = tensor.reshape(reshape_target(tensor.shape, dims, self.zero_is_placeholder))
        return _permute(tensor, self.second_transpose)

    def _volume_known_at_run_time(self, shape):
        """Whether this is shape inference of a reshape to a shape tensor of dynamic data: the probe sizes standing
        for the dynamic dims may not fit a reshape that fits the sizes it runs with (one halving a dim, say)."""
        network = self.__dict__.get("_network")  # engines run restored layers, which have none
        return shape is not None and network is not None and -1 in self._inputs[0].shape


@network_method
def add_shuffle(self, input):
    identity = Permutation(range(8))
    return self._add(IShuffleLayer, [input], first_transpose=identity, reshape_dims=None,
                     second_transpose=identity, zero_is_placeholder=True)
