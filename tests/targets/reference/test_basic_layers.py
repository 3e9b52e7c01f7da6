import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt

from .conftest import RecordingLogger


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


def _two_dynamic_inputs(define):
    """(network output, engine) of define(network, x, y) for host FLOAT inputs x (-1, 3), profile 1..4, and y (-1, 3),
    profile 1..8."""
    builder = trt.Builder(RecordingLogger())
    network = builder.create_network(0)
    x, y = network.add_input("x", trt.float32, (-1, 3)), network.add_input("y", trt.float32, (-1, 3))
    output = define(network, x, y)
    assert output is not None, builder.logger.errors()
    output.name = "out"
    network.mark_output(output)
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 3), (2, 3), (4, 3))
    profile.set_shape("y", (1, 3), (4, 3), (8, 3))
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    for tensor in (x, y, output):
        tensor.location = trt.TensorLocation.HOST
    plan = builder.build_serialized_network(network, config)
    assert plan is not None, builder.logger.errors()
    return output, trt.Runtime(builder.logger).deserialize_cuda_engine(plan)


def test_dynamic_dims_broadcast_whatever_their_sizes_as_tensorrt_checks_them_when_the_engine_runs():
    """x twice along dim 0 plus y: their dynamic dims were inferred from different probes and refused as if static."""
    def define(network, x, y):
        doubled = network.add_concatenation([x, x])
        doubled.axis = 0
        return network.add_elementwise(doubled.get_output(0), y, trt.ElementWiseOperation.SUM).get_output(0)

    output, engine = _two_dynamic_inputs(define)
    assert tuple(output.shape) == (-1, 3)
    x, y, out = torch.randn(2, 3), torch.randn(4, 3), torch.empty(4, 3)
    context = engine.create_execution_context()
    for name, tensor in (("x", x), ("y", y), ("out", out)):
        if name != "out":
            context.set_input_shape(name, tuple(tensor.shape))
        context.set_tensor_address(name, tensor.data_ptr())
    assert context.execute_async_v3(0)
    torch.testing.assert_close(out, torch.cat([x, x]) + y)


def test_a_dynamic_dim_takes_the_static_size_it_broadcasts_with():
    def define(network, x, y):
        rows = network.add_constant((2, 3), trt.Weights(np.ones((2, 3), dtype=np.float32))).get_output(0)
        return network.add_elementwise(x, rows, trt.ElementWiseOperation.SUM).get_output(0)

    output, _ = _two_dynamic_inputs(define)
    assert tuple(output.shape) == (2, 3)


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


def test_a_tensor_named_like_another_is_still_its_own(run_network):
    """TensorRT links tensors, not names: an intermediate named like an input was read in that input's place (a
    model variable `input`, traced as %input_1, where the engine's second input is input_1)."""
    def define(network, a, b):
        doubled = network.add_elementwise(a, a, trt.ElementWiseOperation.SUM).get_output(0)
        doubled.name = "in1"
        return network.add_elementwise(doubled, b, trt.ElementWiseOperation.PROD).get_output(0)

    a, b = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(run_network(define, [a, b]), (a + a) * b)
