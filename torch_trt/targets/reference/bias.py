"""The reference builder's bias fusion: a product with constant weights, then the sum with a constant bias, as one GEMM.

TensorRT's builder runs a matrix multiply and the bias added to it as one kernel whose epilogue adds the
bias while it writes the product. The reference does the same for what converters build from linear layers:

    product = x @ W        (matrix multiply, W a constant whose batch dims are all 1, read as it is or, as
                            converters keep a linear layer's weight, TRANSPOSE)
    output  = product + b  (elementwise SUM, b a constant row: batch dims of 1, as wide as the product)

becomes one `addmm(b, x, W)` step: one pass over the output instead of two, and a half product rounded once,
as eager's linear layers round it. On CUDA a float32 pair is left as it is: cuBLAS's addmm there first copies and
scales the bias into the output and then picks slower kernels (BERT-base in float32 at batch 1 on an H200: 25 µs a
768x768 product, against 15 without the bias), while inductor adds the bias in whichever kernel reads the product
next. Whether a pair fits is known when the engine is built: the network's rules
give x the weight's dtype and rank and the bias the product's, so only the constants' shapes decide, and the
step keeps them as a matrix (a transposed view for TRANSPOSE) and a row (views, no copies) to do no shape work per
call.
"""

import torch

from .dataflow import producers_and_readers
from .enums import ElementWiseOperation, LayerType, MatrixOperation


def fuse_bias(steps, folded, output_names, device):
    """`steps` ((layer, record, weights) in order) with each product-plus-bias pair replaced by one fused step, but
    float32 ones on CUDA (module docstring)."""
    producers, readers = producers_and_readers(steps, output_names)
    fused, result = set(), []
    for step in steps:
        product, weight, bias = _match(step, producers, readers, folded)
        if product is None or (device.type == "cuda" and folded[weight].dtype == torch.float32):
            result.append(step)
            continue
        fused.add(id(product))
        matrix = folded[weight].reshape(folded[weight].shape[-2:])
        if product[0].op1 == MatrixOperation.TRANSPOSE:
            matrix = matrix.mT
        matrix = _fold(f"{weight} as a matrix", matrix, folded)
        row = _fold(f"{bias} as a row", folded[bias].reshape(folded[bias].shape[-1:]), folded)
        record = {"inputs": [product[1]["inputs"][0], matrix, row], "outputs": step[1]["outputs"]}
        result.append((FusedBias(), record, {}))
    return [step for step in result if id(step) not in fused]


def _match(step, producers, readers, folded):
    """(the product step, its weight's name, the bias's name) when `step` adds a constant row to a product with a
    constant matrix that nothing else reads, else (None,) * 3."""
    layer, record, _ = step
    if layer.type != LayerType.ELEMENTWISE or layer.op != ElementWiseOperation.SUM:
        return (None,) * 3
    for product_name, bias in (record["inputs"], record["inputs"][::-1]):
        product = producers.get(product_name)
        if product is None or readers.get(product_name) != 1 or bias not in folded:
            continue
        multiply = product[0]
        if multiply.type != LayerType.MATRIX_MULTIPLY or multiply.op0 != MatrixOperation.NONE or \
                multiply.op1 not in (MatrixOperation.NONE, MatrixOperation.TRANSPOSE):
            continue
        data, weight = product[1]["inputs"]
        if weight in folded and data not in folded and _is_row_of(folded[bias], folded[weight], multiply.op1):
            return product, weight, bias
    return (None,) * 3


def _is_row_of(bias, weight, op):
    """Whether weight is a matrix (batch dims of 1) and bias a row as wide as its product (batch dims of 1)."""
    width = weight.shape[-2] if op == MatrixOperation.TRANSPOSE else weight.shape[-1]
    return all(d == 1 for d in weight.shape[:-2]) and all(d == 1 for d in bias.shape[:-1]) and bias.shape[-1] == width


def _fold(name, view, folded):
    """`name`, now the name of the folded constant `view` (a view of another one)."""
    folded[name] = view
    return name


class FusedBias:
    """The kernel of a fused product-plus-bias step: x @ matrix + row as one addmm over x's rows."""

    type = None  # no layer type: other fusions match no pattern on it

    def _compute(self, inputs, weights):
        x, matrix, row = inputs
        if x.dim() == 2:
            return torch.addmm(row, x, matrix)
        if x.is_contiguous():
            return torch.addmm(row, x.view(-1, matrix.shape[0]), matrix).view(*x.shape[:-1], matrix.shape[1])
        # x may be a transpose of its leading dims (nn.MultiheadAttention's (B, T, E) read as (T, B, E)): its rows are
        # multiplied in memory order, and the product transposed back, rather than x copied to row-major order first
        order = _memory_order(x)
        rows = x.permute(order)
        product = torch.addmm(row, rows.reshape(-1, matrix.shape[0]), matrix)
        return product.reshape(*rows.shape[:-1], matrix.shape[1]).permute(_inverse(order))


def _memory_order(x):
    """x's leading dims from the largest stride to the smallest, then its last dim."""
    leading = sorted(range(x.dim() - 1), key=lambda dim: -x.stride(dim))
    return [*leading, x.dim() - 1]


def _inverse(order):
    return sorted(range(len(order)), key=order.__getitem__)
