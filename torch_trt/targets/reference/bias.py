"""The reference builder's bias fusion: a product with constant weights, then the sum with a constant bias, as one GEMM.

TensorRT's builder runs a matrix multiply and the bias added to it as one kernel whose epilogue adds the
bias while it writes the product. The reference does the same for what converters build from linear layers:

    product = x @ W        (matrix multiply, W a constant whose batch dims are all 1)
    output  = product + b  (elementwise SUM, b a constant varying along the last dim only)

becomes one `addmm(b, x, W)` step: one pass over the output instead of two, and a half product rounded once,
as eager's linear layers round it. Whether the step fits is only known from the shapes, so the fused step
checks them each time it is traced and runs the two layers when they do not fit.
"""

import torch

from .dataflow import producers_and_readers
from .enums import ElementWiseOperation, LayerType, MatrixOperation


def fuse_bias(steps, folded, output_names):
    """`steps` ((layer, record, weights) in order) with each product-plus-bias pair replaced by one fused step."""
    producers, readers = producers_and_readers(steps, output_names)
    fused, result = set(), []
    for step in steps:
        product, weight, bias = _match(step, producers, readers, folded)
        if product is None:
            result.append(step)
            continue
        fused.add(id(product))
        record = {"inputs": [product[1]["inputs"][0], weight, bias], "outputs": step[1]["outputs"]}
        result.append((_FusedBias(product, step), record, {}))
    return [step for step in result if id(step) not in fused]


def _match(step, producers, readers, folded):
    """(the product step, its weight's name, the bias's name) when `step` adds a constant to a product with constant
    weights that nothing else reads, else (None,) * 3."""
    layer, record, _ = step
    if layer.type != LayerType.ELEMENTWISE or layer.op != ElementWiseOperation.SUM:
        return (None,) * 3
    for product_name, bias in (record["inputs"], record["inputs"][::-1]):
        product = producers.get(product_name)
        if product is None or readers.get(product_name) != 1 or bias not in folded:
            continue
        matrix = product[0]
        if matrix.type != LayerType.MATRIX_MULTIPLY or (matrix.op0, matrix.op1) != (MatrixOperation.NONE,) * 2:
            continue
        data, weight = product[1]["inputs"]
        if weight in folded and data not in folded:
            return product, weight, bias
    return (None,) * 3


class _FusedBias:
    """The kernel of a fused product-plus-bias step: addmm where the shapes fit, the two layers where they do not."""

    type = None  # no layer type: other fusions match no pattern on it

    def __init__(self, product, bias_sum):
        self.product, self.bias_sum = product, bias_sum

    def _compute(self, inputs, weights):
        x, weight, bias = inputs
        if not _fits(x, weight, bias):
            product = self.product[0]._compute([x, weight], self.product[2])
            operands = [product if name == self.product[1]["outputs"][0] else bias
                        for name in self.bias_sum[1]["inputs"]]
            return self.bias_sum[0]._compute(operands, self.bias_sum[2])
        rows, columns = weight.shape[-2:]
        output = torch.addmm(_shaped(bias, (columns,)), _shaped(x, (-1, rows)), _shaped(weight, (rows, columns)))
        return _shaped(output, (*x.shape[:-1], columns))


def _fits(x, weight, bias):
    """Whether x @ weight + bias is addmm's: one dtype, weight a matrix (batch dims of 1) no wider in rank than x,
    and bias a row of the product's width, of no higher rank than x."""
    if not (x.dtype == weight.dtype == bias.dtype and x.is_floating_point()):
        return False
    if not (2 <= weight.dim() <= x.dim() and 1 <= bias.dim() <= x.dim() and x.shape[-1] == weight.shape[-2]):
        return False
    return all(d == 1 for d in weight.shape[:-2]) and all(d == 1 for d in bias.shape[:-1]) and \
        bias.shape[-1] == weight.shape[-1]


def _shaped(tensor, shape):
    """`tensor` reshaped to `shape`, or itself where it has that shape already (no view for code generation to
    carry)."""
    return tensor if tuple(tensor.shape) == shape else tensor.reshape(shape)
