"""The reference builder fuses unmasked attention into one scaled_dot_product_attention step (attention.py)."""

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt

from .conftest import RecordingLogger

NONE, TRANSPOSE = trt.MatrixOperation.NONE, trt.MatrixOperation.TRANSPOSE
SHAPES = {"q": (2, 4, 5, 8), "k": (2, 4, 6, 8), "v": (2, 4, 6, 8)}


def _engine(define, shapes=SHAPES, level=3):
    """Build define(network, q, k, v) -> output on host inputs of `shapes` at builder_optimization_level `level`;
    (engine, its program's kernel names)."""
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    inputs = [network.add_input(name, trt.DataType.FLOAT, shape) for name, shape in shapes.items()]
    output = define(network, *inputs)
    output.name = "out"
    network.mark_output(output)
    for tensor in inputs + [output]:
        tensor.location = trt.TensorLocation.HOST
    config = builder.create_builder_config()
    config.builder_optimization_level = level
    engine = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(network, config))
    assert engine is not None, logger.errors()
    kernels = [type(node.target.__self__).__name__ for node in engine._module.graph.nodes
               if node.op == "call_function" and hasattr(node.target, "__self__")]
    return engine, kernels


def _run(engine, tensors):
    context = engine.create_execution_context()
    for name, tensor in zip(SHAPES, tensors):
        context.set_input_shape(name, tuple(tensor.shape))
        context.set_tensor_address(name, tensor.data_ptr())
    out = torch.empty(tuple(context.get_tensor_shape("out")))
    context.set_tensor_address("out", out.data_ptr())
    assert context.execute_async_v3(0)
    return out


def _scalar(network, value, rank=4):
    return network.add_constant((1,) * rank, trt.Weights(np.full((1,) * rank, value, dtype=np.float32))).get_output(0)


def _softmax(network, scores, axis=3):
    layer = network.add_softmax(scores)
    layer.axes = 1 << axis
    return layer.get_output(0)


def _scaled_scores(network, q, k, v):
    """SDPA's converter: the query scaled, then Q @ K^T with op1 TRANSPOSE."""
    scaled = network.add_elementwise(q, _scalar(network, 0.3), trt.ElementWiseOperation.PROD).get_output(0)
    scores = network.add_matrix_multiply(scaled, NONE, k, TRANSPOSE).get_output(0)
    return network.add_matrix_multiply(_softmax(network, scores), NONE, v, NONE).get_output(0)


def _transposed_key(network, q, k, v):
    """nn.MultiheadAttention lowered: K transposed by a shuffle, the scores scaled after the product."""
    transpose = network.add_shuffle(k)
    transpose.first_transpose = (0, 1, 3, 2)
    scores = network.add_matrix_multiply(q, NONE, transpose.get_output(0), NONE).get_output(0)
    scaled = network.add_elementwise(scores, _scalar(network, 0.3), trt.ElementWiseOperation.PROD).get_output(0)
    return network.add_matrix_multiply(_softmax(network, scaled), NONE, v, NONE).get_output(0)


def _divided_scores(network, q, k, v):
    """Attention written by hand: the scores divided by sqrt(head size)."""
    scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
    divided = network.add_elementwise(scores, _scalar(network, 2.0), trt.ElementWiseOperation.DIV).get_output(0)
    return network.add_matrix_multiply(_softmax(network, divided), NONE, v, NONE).get_output(0)


def _constant_over_scores(network, q, k, v):
    """c / scores is no scale."""
    scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
    divided = network.add_elementwise(_scalar(network, 2.0), scores, trt.ElementWiseOperation.DIV).get_output(0)
    return network.add_matrix_multiply(_softmax(network, divided), NONE, v, NONE).get_output(0)


def _softmax_over_queries(network, q, k, v):
    """Softmax over dim 2, not the keys: attention's layers, not attention."""
    scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
    return network.add_matrix_multiply(_softmax(network, scores, axis=2), NONE, v, NONE).get_output(0)


def _masked(network, q, k, v):
    scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
    masked = network.add_elementwise(scores, _scalar(network, -1.0), trt.ElementWiseOperation.SUM).get_output(0)
    return network.add_matrix_multiply(_softmax(network, masked), NONE, v, NONE).get_output(0)


def _inputs(shapes=SHAPES):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=generator) for shape in shapes.values()]


def _attention(q, k, v, scale=1.0, dim=-1):
    return torch.softmax(q @ k.transpose(-1, -2) * scale, dim) @ v


@pytest.mark.parametrize("define,scale", [(_scaled_scores, 0.3), (_transposed_key, 0.3), (_divided_scores, 0.5)],
                         ids=["query_scaled", "key_shuffled", "scores_divided"])
def test_unmasked_attention_is_one_fused_step(define, scale):
    engine, kernels = _engine(define)
    assert kernels == ["_FusedAttention"], kernels
    q, k, v = _inputs()
    torch.testing.assert_close(_run(engine, [q, k, v]), _attention(q, k, v, scale=scale))


def test_a_constant_divided_by_the_scores_is_not_fused():
    engine, kernels = _engine(_constant_over_scores)
    assert "_FusedAttention" not in kernels, kernels
    q, k, v = _inputs()
    torch.testing.assert_close(_run(engine, [q, k, v]), torch.softmax(2 / (q @ k.transpose(-1, -2)), -1) @ v)


def test_softmax_over_another_dim_runs_layer_by_layer():
    """The chain matches, but the fused step's shape check sends it through the original layers."""
    engine, _ = _engine(_softmax_over_queries)
    q, k, v = _inputs()
    torch.testing.assert_close(_run(engine, [q, k, v]), _attention(q, k, v, dim=2))


def test_masked_scores_are_not_fused():
    engine, kernels = _engine(_masked)
    assert "_FusedAttention" not in kernels, kernels
    q, k, v = _inputs()
    torch.testing.assert_close(_run(engine, [q, k, v]), torch.softmax(q @ k.transpose(-1, -2) - 1, -1) @ v)


def test_a_fused_step_whose_shapes_do_not_fit_runs_its_layers_with_their_constants_in_generated_code():
    """Keys shared by all heads do not fit scaled_dot_product_attention: the fused step runs its layers, whose
    scale is a constant of the step (not a weight of the program) that inductor's trace meets as a real tensor."""
    shapes = {**SHAPES, "k": (2, 1, 6, 8), "v": (2, 1, 6, 8)}
    engine, kernels = _engine(_scaled_scores, shapes, level=4)  # CPU code generation starts at level 4
    assert kernels == ["_FusedAttention"], kernels
    q, k, v = _inputs(shapes)
    torch.testing.assert_close(_run(engine, [q, k, v]), _attention(q, k, v, scale=0.3))
