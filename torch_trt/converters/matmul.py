"""Matrix product converters: aten::matmul for every rank combination torch allows.

Lowering turns linear, addmm, mm and bmm into aten::matmul (plus t, mul and add), so this one
converter covers them. A 1-D operand becomes a MatrixOperation.VECTOR operand (its vector is a
row for input0, a column for input1, and TensorRT drops the unit dim, as torch does); the
operand with fewer batch dims gets leading 1s, since TensorRT broadcasts only equal counts.
"""

import torch

from ..conversion.registry import converter
from ._helpers import cast, compute_dtype, promote_types, rank, unsqueeze_to_rank


def _operand(ctx, tensor, batch_dims, dtype):
    """(tensor as dtype with `batch_dims` leading dims, its MatrixOperation): VECTOR for 1-D, else NONE."""
    core = 1 if rank(tensor) == 1 else 2
    op = ctx.trt.MatrixOperation.VECTOR if core == 1 else ctx.trt.MatrixOperation.NONE
    return unsqueeze_to_rank(ctx, cast(ctx, tensor, dtype), batch_dims + core), op


@converter("aten::matmul(Tensor self, Tensor other) -> Tensor")
def matmul(ctx, node, args):
    """torch.matmul: dot, vector-matrix, matrix-vector and batched products with broadcast batch dims."""
    a, b = args[0].itensor(), args[1].itensor()
    if 0 in (rank(a), rank(b)):
        raise ValueError("matmul operands must have at least one dim")
    dtype = promote_types(ctx, a, b)
    # TensorRT's matrix multiply takes float inputs only: integer products run in float32 (exact
    # while the partial sums stay below 2**24) and are cast back to the integer dtype.
    compute = compute_dtype(ctx, dtype) if dtype.is_floating_point else torch.float32
    batch_dims = max(rank(a), rank(b), 2) - 2
    input0, op0 = _operand(ctx, a, batch_dims, compute)
    input1, op1 = _operand(ctx, b, batch_dims, compute)
    product = ctx.net.add_matrix_multiply(input0, op0, input1, op1).get_output(0)
    return ctx.set_output(node, [cast(ctx, product, dtype)])
