"""ICumulativeLayer: inclusive or exclusive, forward or reverse prefix sums along one dim.

The axis is input 1, a 0-D INT32/INT64 build-time constant; the reference reads it from the
IConstantLayer that produces it and records it in `_axis`, which the plan carries.
"""

import torch

from ...dtypes import FLOAT_DTYPES, INDEX_DTYPES
from ..enums import CumulativeOperation, LayerType, member
from ..network import ILayer, check, network_method
from .constant import IConstantLayer

_ACCEPTED = FLOAT_DTYPES + INDEX_DTYPES


class ICumulativeLayer(ILayer):
    _layer_type = LayerType.CUMULATIVE
    _attributes = ("op", "exclusive", "reverse", "_axis")  # _axis: resolved at build time, serialized for the engine

    def _check(self, inputs):
        x, axis = inputs
        check(x.dtype in _ACCEPTED, f"cumulative does not accept {x.dtype} input; insert a cast")
        check(x.dim() >= 1, "cumulative needs an input of rank >= 1")
        check(axis.dtype in INDEX_DTYPES and axis.dim() == 0,
              f"cumulative axis must be a 0-D INT32/INT64 tensor, got {axis.dtype} of shape {tuple(axis.shape)}")
        producer = self._inputs[1]._producer
        check(isinstance(producer, IConstantLayer), "cumulative axis must be the output of an IConstantLayer (a "
              "build-time constant)")
        value = int(producer.weights.numpy().reshape(-1)[0])
        check(-x.dim() <= value < x.dim(), f"cumulative axis {value} is out of range for rank {x.dim()}")
        object.__setattr__(self, "_axis", value % x.dim())  # resolved, not a user edit: the network is unchanged

    def _compute(self, inputs, weights):
        x, dim = inputs[0], self._axis
        if self.reverse:
            x = x.flip(dim)
        result = torch.cumsum(x, dim, dtype=x.dtype)
        if self.exclusive:
            result = result - x
        return result.flip(dim) if self.reverse else result


@network_method
def add_cumulative(self, input, axis, op, exclusive, reverse):
    return self._add(ICumulativeLayer, [input, axis], op=member(CumulativeOperation, op, "add_cumulative"),
                     exclusive=bool(exclusive), reverse=bool(reverse))
