"""IReduceLayer: SUM/PROD/MAX/MIN/AVG over the dims of an `axes` bitmask."""

import torch

from ...dtypes import FLOAT_DTYPES, INDEX_DTYPES
from ..enums import LayerType, ReduceOperation as Op, member
from ..network import ILayer, check, network_method

# Float data and INT32/INT64 shape arithmetic (TensorRT's C++ API reference: IReduceLayer, and ReduceOperation's
# table of results per type); BOOL, UINT8, INT8 and FP8 are refused.
_ACCEPTED = FLOAT_DTYPES + INDEX_DTYPES


def axes_from_mask(axes, rank, kind):
    """The dims named by a bitmask (bit i = dim i); it must be non-zero with no bit at or above rank."""
    check(axes > 0, f"{kind} axes must be a non-zero bitmask, got {axes}")
    check(axes >> rank == 0, f"{kind} axes bitmask {bin(axes)} names a dim beyond rank {rank}")
    return [dim for dim in range(rank) if axes >> dim & 1]


def _prod(tensor, dims, keepdim):
    # torch.prod takes one dim at a time; going from the last dim keeps the others' indices valid.
    for dim in sorted(dims, reverse=True):
        tensor = tensor.prod(dim, keepdim=keepdim)
    return tensor


_OPS = {
    Op.SUM: torch.sum, Op.PROD: _prod, Op.MAX: torch.amax, Op.MIN: torch.amin, Op.AVG: torch.mean,
}


class IReduceLayer(ILayer):
    _layer_type = LayerType.REDUCE
    _attributes = ("op", "axes", "keep_dims")

    def _check(self, inputs):
        x = inputs[0]
        check(self.op in _OPS, f"reduce op {self.op.name} is not a reduction (it only serves add_dist_collective)")
        check(x.dtype in _ACCEPTED, f"reduce {self.op.name} does not accept {x.dtype} input; insert a cast")
        if self.op == Op.AVG:
            check(x.dtype in FLOAT_DTYPES, f"reduce AVG needs a float input, got {x.dtype}; insert a cast")
        axes_from_mask(self.axes, x.dim(), "reduce")

    def _compute(self, inputs, weights):
        x = inputs[0]
        dims = axes_from_mask(self.axes, x.dim(), "reduce")
        # torch widens integer SUM/PROD to int64; TensorRT keeps the input dtype.
        return _OPS[self.op](x, dims, keepdim=self.keep_dims).to(x.dtype)


@network_method
def add_reduce(self, input, op, axes, keep_dims):
    return self._add(IReduceLayer, [input], op=member(Op, op, "add_reduce"), axes=int(axes), keep_dims=bool(keep_dims))
