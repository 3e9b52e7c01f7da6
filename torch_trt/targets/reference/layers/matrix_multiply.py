"""IMatrixMultiplyLayer: batched matrix/vector products with TensorRT's batch-dim rules."""

import torch

from ...dtypes import FLOAT_DTYPES
from ..enums import LayerType, MatrixOperation as Op, member
from ..network import ILayer, check, network_method


def _describe(tensor, op):
    return f"{tuple(tensor.shape)} [{op.name}]"


def _batch(tensor, op):
    """The batch dims of one operand: all but the vector (VECTOR) or matrix (NONE/TRANSPOSE) dims."""
    core = 1 if op == Op.VECTOR else 2
    check(tensor.dim() >= core, f"matrix multiply operand {_describe(tensor, op)} needs rank >= {core}")
    return tuple(tensor.shape[:-core])


def _inner(tensor, op, first):
    """The contracted extent K of an operand, as op presents it to the product."""
    if op == Op.VECTOR:
        return tensor.shape[-1]
    # input0 contributes its columns, input1 its rows; TRANSPOSE swaps which axis that is.
    transposed = op == Op.TRANSPOSE
    return tensor.shape[-2] if transposed == first else tensor.shape[-1]


def _as_matrix(tensor, op, first):
    """View an operand as a (batch of) matrix: input0 vectors are rows, input1 vectors columns."""
    if op == Op.TRANSPOSE:
        return tensor.transpose(-1, -2)
    if op == Op.VECTOR:
        return tensor.unsqueeze(-2 if first else -1)
    return tensor


class IMatrixMultiplyLayer(ILayer):
    _layer_type = LayerType.MATRIX_MULTIPLY
    _attributes = ("op0", "op1")

    def _check(self, inputs):
        a, b = inputs
        check(a.dtype == b.dtype, f"matrix multiply inputs must have the same dtype, got {a.dtype} and {b.dtype}; "
              "insert a cast")
        check(a.dtype in FLOAT_DTYPES, f"matrix multiply needs float inputs, got {a.dtype}; insert a cast")
        batch_a, batch_b = _batch(a, self.op0), _batch(b, self.op1)
        shapes = f"{_describe(a, self.op0)} and {_describe(b, self.op1)}"
        check(len(batch_a) == len(batch_b), f"matrix multiply operands {shapes} have different numbers of batch "
              "dims; insert a shuffle to add leading 1s")
        check(all(x == y or 1 in (x, y) for x, y in zip(batch_a, batch_b)),
              f"matrix multiply batch dims of {shapes} are not broadcastable")
        k_a, k_b = _inner(a, self.op0, True), _inner(b, self.op1, False)
        check(k_a == k_b, f"matrix multiply inner dimensions differ: {shapes} contract {k_a} with {k_b}")

    def _compute(self, inputs, weights):
        a, b = _as_matrix(inputs[0], self.op0, True), _as_matrix(inputs[1], self.op1, False)
        if b.dim() > 2 and all(d == 1 for d in b.shape[:-2]):
            # One GEMM over all of a's rows: torch.matmul runs a batch of GEMMs, each reading all of b, whenever a's
            # strides do not fold (a linear layer on a transposed sequence: a bmm of 197 one-row products).
            result = (a.reshape(-1, a.shape[-1]) @ b.reshape(b.shape[-2:])).reshape(*a.shape[:-1], b.shape[-1])
        else:
            result = torch.matmul(a, b)
        # Drop the unit row/column that stood in for a vector operand.
        if self.op0 == Op.VECTOR:
            result = result.squeeze(-2)
        return result.squeeze(-1) if self.op1 == Op.VECTOR else result


@network_method
def add_matrix_multiply(self, input0, op0, input1, op1):
    return self._add(IMatrixMultiplyLayer, [input0, input1], op0=member(Op, op0, "add_matrix_multiply"),
                     op1=member(Op, op1, "add_matrix_multiply"))
