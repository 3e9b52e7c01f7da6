"""Matrix product converters: aten::matmul for every rank combination torch allows, and the product ops
lowering leaves whole (bmm, baddbmm, addbmm, outer: the batched ones hold their batches equal, as eager does).

Lowering turns linear, addmm and mm into aten::matmul (plus t, mul and add), so this one
converter covers them. A 1-D operand becomes a MatrixOperation.VECTOR operand (its vector is a
row for input0, a column for input1, and TensorRT drops the unit dim, as torch does); the
operand with fewer batch dims gets leading 1s, since TensorRT broadcasts only equal counts. A
compile-time right operand stored transposed (a linear layer's weight, read through lowering's aten::t)
stays a constant in its own layout, read with MatrixOperation.TRANSPOSE as GEMMs read it: no transposed
copy, and the engine's weight has the bytes of the module's tensor (reference/lending.py).
"""

import torch

from ..conversion import shape_tensors
from ..conversion.registry import converter
from ._helpers import (axes_mask, cast, compute_dtype, dtype_of, elementwise, promote_types, rank,
                       reduced_weights, unsqueeze, unsqueeze_to_rank)


def _operand(ctx, tensor, batch_dims, dtype):
    """(tensor as dtype with `batch_dims` leading dims, its MatrixOperation): VECTOR for 1-D, else NONE. A
    compile-time tensor becomes a constant of dtype (reduced_weights)."""
    if not isinstance(tensor, ctx.trt.ITensor):
        tensor = ctx.constant(reduced_weights(ctx, tensor, dtype))
    core = 1 if rank(tensor) == 1 else 2
    op = ctx.trt.MatrixOperation.VECTOR if core == 1 else ctx.trt.MatrixOperation.NONE
    return unsqueeze_to_rank(ctx, cast(ctx, tensor, dtype), batch_dims + core), op


def _product(ctx, a, b, b_transposed=False):
    """torch.matmul(a, b) as an ITensor of the operands' promoted dtype; each operand an ITensor or a compile-time
    tensor; `b_transposed`: b holds the right operand's transpose (its last two dims swapped)."""
    if 0 in (rank(a), rank(b)):
        raise ValueError("matmul operands must have at least one dim")
    dtype = promote_types(ctx, a, b)
    if not dtype.is_floating_point:  # TensorRT multiplies floats only; float32 sums are exact only below 2**24
        raise NotImplementedError(f"a {dtype} matrix product runs in PyTorch: TensorRT's products take floats, in "
                                  "which integer sums past 2**24 are not exact")
    compute = compute_dtype(ctx, dtype)
    batch_dims = max(rank(a), rank(b), 2) - 2
    input0, op0 = _operand(ctx, a, batch_dims, compute)
    input1, op1 = _operand(ctx, b, batch_dims, compute)
    if b_transposed:
        op1 = ctx.trt.MatrixOperation.TRANSPOSE
    product = ctx.net.add_matrix_multiply(input0, op0, input1, op1).get_output(0)
    return cast(ctx, product, dtype)


@converter("aten::matmul(Tensor self, Tensor other) -> Tensor")
def matmul(ctx, node, args):
    """torch.matmul: dot, vector-matrix, matrix-vector and batched products with broadcast batch dims."""
    return ctx.set_output(node, [_product(ctx, _operand_value(args[0]), *_right_operand(ctx, args[1]))])


def _right_operand(ctx, arg):
    """(operand, transposed) of matmul's right operand: a compile-time matrix that is the transposed view of a
    contiguous tensor becomes that tensor, transposed=True; anything else is itself."""
    value = arg.value
    if not arg.is_itensor() and isinstance(value, torch.Tensor) and value.dim() >= 2 and not value.is_contiguous() \
            and value.mT.is_contiguous():
        return value.mT, True
    return _operand_value(arg), False


def _operand_value(arg):
    """A product operand's ITensor, or its compile-time tensor (made a constant in the product's compute dtype)."""
    return arg.value if not arg.is_itensor() and isinstance(arg.value, torch.Tensor) else arg.itensor()


def _add_scaled(ctx, node, args, product):
    """beta * self + alpha * product; beta = 0 ignores self, NaN and inf included, as PyTorch documents."""
    beta, alpha, dtype = args["beta"].to_float(), args["alpha"].to_float(), dtype_of(ctx, product)
    op = ctx.trt.ElementWiseOperation
    if alpha != 1:
        product = elementwise(ctx, product, alpha, op.PROD, dtype)
    if beta == 0:
        return ctx.set_output(node, [product])
    bias = args["self"].itensor()
    if beta != 1:
        bias = elementwise(ctx, bias, beta, op.PROD, dtype)
    return ctx.set_output(node, [elementwise(ctx, product, bias, op.SUM, dtype)])


def _batched_product(ctx, batch1, batch2, op):
    """batch1 @ batch2 of two batches of matrices, which must hold as many (matmul would broadcast a batch of 1)."""
    batch1, batch2 = _operand_value(batch1), _operand_value(batch2)
    sizes = [shape_tensors.dim_size(ctx, batch, 0) for batch in (batch1, batch2)]
    shape_tensors.require(ctx, shape_tensors.arithmetic(ctx, "EQUAL", *sizes),
                          f"{op}: the two batches must hold as many matrices")
    return _product(ctx, batch1, batch2)


@converter("aten::bmm(Tensor self, Tensor mat2) -> Tensor")
def bmm(ctx, node, args):
    """self @ mat2, batch by batch."""
    return ctx.set_output(node, [_batched_product(ctx, args["self"], args["mat2"], "bmm")])


@converter("aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
def baddbmm(ctx, node, args):
    """beta * self + alpha * (batch1 @ batch2), self broadcast to the batched product."""
    return _add_scaled(ctx, node, args, _batched_product(ctx, args["batch1"], args["batch2"], "baddbmm"))


@converter("aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
def addbmm(ctx, node, args):
    """beta * self + alpha * the sum over the batch of batch1 @ batch2."""
    products = _batched_product(ctx, args["batch1"], args["batch2"], "addbmm")
    total = ctx.net.add_reduce(products, ctx.trt.ReduceOperation.SUM, axes_mask([0], 3), False).get_output(0)
    return _add_scaled(ctx, node, args, total)


# No aten::ger converter: TorchScript records torch.ger as aten::outer, its alias, when scripting and tracing.
@converter("aten::outer(Tensor self, Tensor vec2) -> Tensor")
def outer(ctx, node, args):
    """The outer product of two vectors: self as a column times vec2 as a row, elementwise (exact, any dtype)."""
    column = unsqueeze(ctx, args["self"].itensor(), 1)
    return ctx.set_output(node, [elementwise(ctx, column, args["vec2"].itensor(), ctx.trt.ElementWiseOperation.PROD)])
