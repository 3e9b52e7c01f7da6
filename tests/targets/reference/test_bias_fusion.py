"""The reference builder fuses a product with constant weights and the constant bias added to it into one GEMM
(bias.py)."""

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt

from .conftest import host_engine

NONE = trt.MatrixOperation.NONE
WEIGHT = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 10
ROW_BIAS = torch.tensor([[1.0, -2.0, 0.5, 3.0]])


def _constant(network, tensor):
    return network.add_constant(tuple(tensor.shape), trt.Weights(np.ascontiguousarray(tensor.numpy()))).get_output(0)


def _plus_bias(bias, dtype=torch.float32):
    def define(network, x):
        product = network.add_matrix_multiply(x, NONE, _constant(network, WEIGHT.to(dtype)), NONE).get_output(0)
        return network.add_elementwise(_constant(network, bias.to(dtype)), product,
                                       trt.ElementWiseOperation.SUM).get_output(0)

    return define


def _product_read_twice(network, x):
    product = network.add_matrix_multiply(x, NONE, _constant(network, WEIGHT), NONE).get_output(0)
    biased = network.add_elementwise(product, _constant(network, ROW_BIAS), trt.ElementWiseOperation.SUM)
    return network.add_elementwise(biased.get_output(0), product, trt.ElementWiseOperation.PROD).get_output(0)


def _program(define, **where):
    program = host_engine(define, shape=(2, 3), **where)[1]._module
    kernels = [type(node.target.__self__).__name__ for node in program.graph.nodes
               if node.op == "call_function" and hasattr(node.target, "__self__")]
    return program, kernels


def test_a_product_plus_a_row_bias_is_one_addmm():
    program, kernels = _program(_plus_bias(ROW_BIAS))
    x = torch.randn(2, 3)
    assert kernels == ["FusedBias"]
    ops = [str(node.target) for node in make_fx(program)(x).graph.nodes if node.op == "call_function"]
    assert "aten.addmm.default" in ops and "aten.add.Tensor" not in ops, ops
    torch.testing.assert_close(program(x)[0], x @ WEIGHT + ROW_BIAS)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_on_cuda_a_product_plus_bias_is_one_addmm_in_half_precision_only(dtype):
    """cuBLAS's addmm adds a half bias in the GEMM's epilogue, but scales a float32 one into the output first and
    picks slower kernels: a float32 bias is left to the sum after the product (bias.py)."""
    program, kernels = _program(_plus_bias(ROW_BIAS, dtype), location=trt.TensorLocation.DEVICE,
                                input_type=trt.float16 if dtype == torch.float16 else trt.float32)
    assert kernels == (["FusedBias"] if dtype == torch.float16 else ["IMatrixMultiplyLayer", "IElementWiseLayer"])
    x = torch.randn(2, 3, device="cuda", dtype=dtype)
    # against float32 arithmetic on the same values: the fused half product is rounded once, not twice
    expected = x.float() @ WEIGHT.to(x).float() + ROW_BIAS.to(x).float()
    torch.testing.assert_close(program(x)[0].float(), expected, rtol=2e-3, atol=2e-3)


def test_a_bias_that_is_not_a_row_is_not_fused():
    column_bias = torch.tensor([[1.0], [-1.0]])  # one value per row of the product: not addmm's bias
    program, kernels = _program(_plus_bias(column_bias))
    x = torch.randn(2, 3)
    assert kernels == ["IMatrixMultiplyLayer", "IElementWiseLayer"]
    torch.testing.assert_close(program(x)[0], x @ WEIGHT + column_bias)


def test_a_batched_product_plus_bias_is_one_addmm_over_all_rows():
    """Weights and bias with unit batch dims, as converters build linear layers on a batch of sequences."""
    def define(network, x):
        product = network.add_matrix_multiply(x, NONE, _constant(network, WEIGHT[None]), NONE).get_output(0)
        return network.add_elementwise(product, _constant(network, ROW_BIAS[None]),
                                       trt.ElementWiseOperation.SUM).get_output(0)

    program = host_engine(define, shape=(-1, 5, 3))[1]._module
    x = torch.randn(4, 5, 3)
    ops = [str(node.target) for node in make_fx(program)(x).graph.nodes if node.op == "call_function"]
    assert ops.count("aten.addmm.default") == 1 and "aten.add.Tensor" not in ops, ops
    torch.testing.assert_close(program(x)[0], x @ WEIGHT + ROW_BIAS)


def test_a_product_read_by_another_layer_is_not_fused():
    program, kernels = _program(_product_read_twice)
    x = torch.randn(2, 3)
    assert "FusedBias" not in kernels and "IMatrixMultiplyLayer" in kernels
    torch.testing.assert_close(program(x)[0], (x @ WEIGHT + ROW_BIAS) * (x @ WEIGHT))


def test_a_product_with_a_transposed_weight_plus_its_bias_is_one_addmm_reading_the_weight_in_place():
    """Converters keep a linear layer's (out, in) weight as it is and read it TRANSPOSE: the fused step reads a
    transposed view of that constant, no transposed copy, and the bias is as wide as the weight's rows."""
    stored = WEIGHT.T.contiguous()  # (4, 3): the product's width is its row count

    def define(network, x):
        product = network.add_matrix_multiply(x, NONE, _constant(network, stored), trt.MatrixOperation.TRANSPOSE)
        return network.add_elementwise(product.get_output(0), _constant(network, ROW_BIAS),
                                       trt.ElementWiseOperation.SUM).get_output(0)

    program, kernels = _program(define)
    x = torch.randn(2, 3)
    assert kernels == ["FusedBias"]
    (matrix,) = [p for p in program.parameters() if p.dim() == 2 and p.shape != ROW_BIAS.shape]
    assert matrix.shape == (3, 4) and matrix.mT.is_contiguous()  # a view of the (4, 3) constant
    torch.testing.assert_close(program(x)[0], x @ WEIGHT + ROW_BIAS)


def test_a_product_of_a_transposed_input_multiplies_its_rows_in_memory_order_without_copying_them():
    """nn.MultiheadAttention reads a (B, T, E) batch as (T, B, E) before its projection: the rows are not copied to
    row-major order first, and the product comes out transposed back."""
    def define(network, x):
        transpose = network.add_shuffle(x)
        transpose.first_transpose = (1, 0, 2)
        product = network.add_matrix_multiply(transpose.get_output(0), NONE, _constant(network, WEIGHT[None]), NONE)
        return network.add_elementwise(product.get_output(0), _constant(network, ROW_BIAS[None]),
                                       trt.ElementWiseOperation.SUM).get_output(0)

    program = host_engine(define, shape=(4, 5, 3))[1]._module
    x = torch.randn(4, 5, 3)
    ops = [str(node.target) for node in make_fx(program)(x).graph.nodes if node.op == "call_function"]
    assert ops.count("aten.addmm.default") == 1 and "aten.clone.default" not in ops, ops
    torch.testing.assert_close(program(x)[0], x.transpose(0, 1) @ WEIGHT + ROW_BIAS)
