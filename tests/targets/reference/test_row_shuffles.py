"""The reference builder shuffles a GEMM's input rows instead of its output's, where the input is shuffled anyway
(row_shuffles.py)."""

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt

from .conftest import aten_ops, program_and_kernels, shuffled

B, H, T, D = 2, 3, 5, 4  # batch, heads, tokens, head size
E = H * D
WEIGHT = torch.randn(E, 6, generator=torch.Generator().manual_seed(0))
BIAS = torch.randn(1, 6, generator=torch.Generator().manual_seed(1))


def _constant(network, tensor):
    return network.add_constant(tuple(tensor.shape), trt.Weights(np.ascontiguousarray(tensor.numpy()))).get_output(0)



def _projected(network, heads):
    """nn.MultiheadAttention(batch_first=True)'s output projection, lowered: heads (B, H, T, D) merged into rows in
    (T, B) order, the product with constant weights plus a bias, then rows back to (B, T)."""
    rows = shuffled(network, heads, first=(2, 0, 1, 3), reshape=(T * B, E))
    product = network.add_matrix_multiply(rows, trt.MatrixOperation.NONE, _constant(network, WEIGHT),
                                          trt.MatrixOperation.NONE).get_output(0)
    return network.add_elementwise(product, _constant(network, BIAS), trt.ElementWiseOperation.SUM).get_output(0)


def _projected_eager(heads):
    return heads.permute(2, 0, 1, 3).reshape(T * B, E) @ WEIGHT + BIAS




def test_rows_moved_after_the_product_are_moved_in_the_copy_that_merges_the_heads():
    def define(network, heads):
        unmerged = shuffled(network, _projected(network, heads), reshape=(T, B, 6))
        return shuffled(network, unmerged, first=(1, 0, 2))

    program, kernels = program_and_kernels(define, (B, H, T, D))
    assert kernels == ["_RowsShuffledFirst"], kernels
    heads = torch.randn(B, H, T, D)
    result = program(heads)[0]
    assert result.is_contiguous()  # the product's rows come out in (B, T) order, as its readers read them
    assert aten_ops(program, heads).count("aten.clone.default") == 1
    torch.testing.assert_close(result, _projected_eager(heads).reshape(T, B, 6).transpose(0, 1))


@pytest.mark.parametrize("reshape,expected", [
    ((T * B, 2, 3), lambda product: product.reshape(T * B, 2, 3)),
    ((T * B * 6,), lambda product: product.reshape(-1)),
], ids=["splits_the_last_dim", "merges_the_last_dim"])
def test_a_shuffle_after_that_does_more_than_move_rows_runs_after_the_product(reshape, expected):
    def define(network, heads):
        return shuffled(network, _projected(network, heads), reshape=reshape)

    program, kernels = program_and_kernels(define, (B, H, T, D))
    assert kernels == ["_RowsShuffledFirst"], kernels
    heads = torch.randn(B, H, T, D)
    torch.testing.assert_close(program(heads)[0], expected(_projected_eager(heads)))


def test_a_product_whose_input_is_not_shuffled_keeps_its_shuffle_after():
    """Moving the rows would copy an input that no shuffle copies now."""
    def define(network, rows):
        product = network.add_matrix_multiply(rows, trt.MatrixOperation.NONE, _constant(network, WEIGHT),
                                              trt.MatrixOperation.NONE).get_output(0)
        biased = network.add_elementwise(product, _constant(network, BIAS), trt.ElementWiseOperation.SUM)
        return shuffled(network, shuffled(network, biased.get_output(0), reshape=(T, B, 6)), first=(1, 0, 2))

    program, kernels = program_and_kernels(define, (T * B, E))
    assert "_RowsShuffledFirst" not in kernels and "FusedBias" in kernels, kernels
    rows = torch.randn(T * B, E)
    torch.testing.assert_close(program(rows)[0], (rows @ WEIGHT + BIAS).reshape(T, B, 6).transpose(0, 1))


def test_a_product_another_layer_reads_keeps_its_shuffle_after():
    def define(network, heads):
        product = _projected(network, heads)
        moved = shuffled(network, shuffled(network, product, reshape=(T, B, 6)), first=(1, 0, 2))
        return network.add_elementwise(moved, shuffled(network, product, reshape=(B, T, 6)),
                                       trt.ElementWiseOperation.SUM).get_output(0)

    program, kernels = program_and_kernels(define, (B, H, T, D))
    assert "_RowsShuffledFirst" not in kernels, kernels
    heads = torch.randn(B, H, T, D)
    product = _projected_eager(heads)
    torch.testing.assert_close(program(heads)[0], product.reshape(T, B, 6).transpose(0, 1) + product.reshape(B, T, 6))
