import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt


def test_activation_relu(run_network):
    x = torch.randn(2, 3)
    out = run_network(lambda net, a: net.add_activation(a, trt.ActivationType.RELU).get_output(0), [x])
    torch.testing.assert_close(out, torch.relu(x))


def test_clip_is_max_of_alpha_and_min_of_beta_and_x(run_network):
    """TensorRT's CLIP: max(alpha, min(beta, x)), so alpha wins where alpha > beta (torch.clamp gives beta)."""
    x = torch.tensor([-3.0, 0.0, 3.0])

    def define(net, a):
        layer = net.add_activation(a, trt.ActivationType.CLIP)
        layer.alpha, layer.beta = 1.0, -1.0
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), torch.ones(3))


def test_elementwise_rank_mismatch_refused(refused):
    message = refused(lambda net, a, b: net.add_elementwise(a, b, trt.ElementWiseOperation.SUM),
                      [((2, 3), trt.float32), ((3,), trt.float32)])
    assert "same rank" in message


def test_elementwise_dtype_mismatch_refused(refused):
    message = refused(lambda net, a, b: net.add_elementwise(a, b, trt.ElementWiseOperation.SUM),
                      [((2, 3), trt.float32), ((2, 3), trt.int32)])
    assert "same dtype" in message


def test_shuffle_reshape_with_placeholders(run_network):
    x = torch.randn(2, 3, 4)

    def define(net, a):
        layer = net.add_shuffle(a)
        layer.first_transpose = (0, 2, 1)
        layer.reshape_dims = (0, -1)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), x.permute(0, 2, 1).reshape(2, -1))


def test_constant_refuses_bool_weights(refused):
    message = refused(lambda net: net.add_constant((2,), np.array([True, False])), [])
    assert "BOOL" in message


def test_zero_volume_constant_is_refused(refused):
    """TensorRT's add_constant refuses zero-volume weights (the strictness table has the row)."""
    assert "zero volume" in refused(lambda net: net.add_constant((2, 0), np.zeros((2, 0), np.float32)), [])


def test_empty_tensor_from_a_sliced_placeholder(run_network):
    """How an empty constant is built instead: a one-element constant sliced to the empty shape."""
    x = torch.randn(2, 3)

    def define(net, a):
        placeholder = net.add_constant((1, 1), np.zeros((1, 1), dtype=np.float32)).get_output(0)
        empty = net.add_slice(placeholder, (0, 0), (2, 0), (0, 1)).get_output(0)
        layer = net.add_concatenation([a, empty])
        layer.axis = 1
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), x)
