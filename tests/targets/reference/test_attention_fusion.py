"""The reference builder fuses attention, masked or not, into one scaled_dot_product_attention step (attention.py)."""

import math

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


def _run(engine, tensors, names=SHAPES):
    context = engine.create_execution_context()
    for name, tensor in zip(names, tensors):
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
    """A constant added to the scores is a mask too."""
    scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
    masked = network.add_elementwise(scores, _scalar(network, -1.0), trt.ElementWiseOperation.SUM).get_output(0)
    return network.add_matrix_multiply(_softmax(network, masked), NONE, v, NONE).get_output(0)


def _safe_softmax(network, scores):
    """SDPA's converter with a mask: zeros for a row whose scores are all -inf."""
    peak = network.add_reduce(scores, trt.ReduceOperation.MAX, 1 << 3, True).get_output(0)
    masked_row = network.add_elementwise(peak, _scalar(network, -math.inf), trt.ElementWiseOperation.EQUAL)
    return network.add_select(masked_row.get_output(0), _scalar(network, 0.0), _softmax(network, scores)).get_output(0)


def _float_mask_safe_softmax(network, q, k, v, m):
    """SDPA's converter with a float mask: the query scaled, the mask added, a safe softmax."""
    scaled = network.add_elementwise(q, _scalar(network, 0.3), trt.ElementWiseOperation.PROD).get_output(0)
    scores = network.add_matrix_multiply(scaled, NONE, k, TRANSPOSE).get_output(0)
    masked = network.add_elementwise(m, scores, trt.ElementWiseOperation.SUM).get_output(0)
    return network.add_matrix_multiply(_safe_softmax(network, masked), NONE, v, NONE).get_output(0)


def _bool_mask_safe_softmax(network, q, k, v, m):
    """SDPA's converter with a bool mask (here m > 0): scores kept where it is True, -inf elsewhere."""
    kept = network.add_elementwise(m, _scalar(network, 0.0), trt.ElementWiseOperation.GREATER).get_output(0)
    scaled = network.add_elementwise(q, _scalar(network, 0.3), trt.ElementWiseOperation.PROD).get_output(0)
    scores = network.add_matrix_multiply(scaled, NONE, k, TRANSPOSE).get_output(0)
    masked = network.add_select(kept, scores, _scalar(network, -math.inf)).get_output(0)
    return network.add_matrix_multiply(_safe_softmax(network, masked), NONE, v, NONE).get_output(0)


def _float_mask_plain_softmax(network, q, k, v, m):
    """HuggingFace's eager attention: the scores divided, the mask added, a plain softmax."""
    scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
    divided = network.add_elementwise(scores, _scalar(network, 2.0), trt.ElementWiseOperation.DIV).get_output(0)
    masked = network.add_elementwise(divided, m, trt.ElementWiseOperation.SUM).get_output(0)
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


def test_a_constant_mask_is_fused():
    engine, kernels = _engine(_masked)
    assert kernels == ["_FusedAttention"], kernels
    q, k, v = _inputs()
    torch.testing.assert_close(_run(engine, [q, k, v]), torch.softmax(q @ k.transpose(-1, -2) - 1, -1) @ v)


def test_a_constant_mask_hiding_a_row_gives_nan_there_after_a_plain_softmax():
    hidden = np.zeros((1, 1, 5, 6), dtype=np.float32)
    hidden[..., 2, :] = -np.inf

    def define(network, q, k, v):
        scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
        mask = network.add_constant(hidden.shape, trt.Weights(hidden)).get_output(0)
        masked = network.add_elementwise(scores, mask, trt.ElementWiseOperation.SUM).get_output(0)
        return network.add_matrix_multiply(_softmax(network, masked), NONE, v, NONE).get_output(0)

    engine, kernels = _engine(define)
    assert kernels == ["_FusedAttention"], kernels
    q, k, v = _inputs()
    out = _run(engine, [q, k, v])
    assert out[:, :, 2].isnan().all()
    torch.testing.assert_close(out, torch.softmax(q @ k.transpose(-1, -2) + torch.from_numpy(hidden), -1) @ v,
                               equal_nan=True)


MASKED_SHAPES = {**SHAPES, "m": (2, 1, 5, 6)}


def _mask_and_expected(define, q, k, v):
    """A mask hiding some keys of every query and all keys of the first query of batch 0 (as a float mask: 0 or
    -inf; as a bool mask through m > 0: 1 or -1), and what eager computes with it."""
    keep = torch.rand(2, 1, 5, 6, generator=torch.Generator().manual_seed(1)) > 0.3
    keep[0, 0, 0] = False
    keep[..., 1:, 0] = True
    if define is _bool_mask_safe_softmax:
        return torch.where(keep, 1.0, -1.0), torch.nn.functional.scaled_dot_product_attention(q, k, v, keep, scale=0.3)
    mask = torch.zeros(keep.shape).masked_fill(~keep, -math.inf)
    if define is _float_mask_safe_softmax:
        return mask, torch.nn.functional.scaled_dot_product_attention(q, k, v, mask, scale=0.3)
    return mask, torch.softmax(q @ k.transpose(-1, -2) / 2 + mask, -1) @ v


@pytest.mark.parametrize("define", [_float_mask_safe_softmax, _bool_mask_safe_softmax, _float_mask_plain_softmax],
                         ids=["float_safe", "bool_safe", "float_plain"])
def test_masked_attention_is_one_fused_step_and_a_fully_masked_row_gives_what_the_layers_give(define):
    """A safe softmax gives zeros for a query that sees no key (as eager SDPA does), a plain softmax NaN."""
    engine, kernels = _engine(define, MASKED_SHAPES)
    assert kernels == ["IElementWiseLayer"] * (define is _bool_mask_safe_softmax) + ["_FusedAttention"], kernels
    q, k, v = _inputs(SHAPES)
    mask, expected = _mask_and_expected(define, q, k, v)
    out = _run(engine, [q, k, v, mask], MASKED_SHAPES)
    if define is _float_mask_plain_softmax:
        assert out[0, :, 0].isnan().all() and not out[1].isnan().any() and not out[:, :, 1:].isnan().any()
    else:
        assert (out[0, :, 0] == 0).all()
    torch.testing.assert_close(out, expected, equal_nan=True)


_CAUSAL = np.tril(np.ones(MASKED_SHAPES["m"][-2:], dtype=np.float32))


@pytest.mark.parametrize("define,mask,causal", [
    (_float_mask_safe_softmax, np.zeros(MASKED_SHAPES["m"], dtype=np.float32), False),
    (_bool_mask_safe_softmax, np.ones(MASKED_SHAPES["m"], dtype=np.float32), False),
    (_float_mask_safe_softmax, np.where(_CAUSAL > 0, 0.0, -np.inf).astype(np.float32), True),
    (_bool_mask_safe_softmax, _CAUSAL * 2 - 1, True),
], ids=["float_zeros", "bool_all_true", "float_causal", "bool_causal"])
def test_a_constant_mask_hiding_nothing_or_the_future_is_no_mask_or_is_causal(define, mask, causal, monkeypatch):
    """transformers builds an all-True mask when compiled without one, and a causal one for a decoder: attention
    kernels without a mask to read are faster."""
    calls = []
    attention = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention",
                        lambda *args, **kwargs: calls.append(kwargs) or attention(*args, **kwargs))

    def with_constant_mask(network, q, k, v):
        values = np.broadcast_to(mask, MASKED_SHAPES["m"]).copy()
        return define(network, q, k, v, network.add_constant(values.shape, trt.Weights(values)).get_output(0))

    engine, kernels = _engine(with_constant_mask)
    assert kernels == ["_FusedAttention"], kernels
    q, k, v = _inputs()
    torch.testing.assert_close(_run(engine, [q, k, v]), attention(q, k, v, is_causal=causal, scale=0.3))
    assert [(call["attn_mask"], call["is_causal"]) for call in calls] == [(None, causal)]


def test_masked_scores_read_elsewhere_are_not_fused():
    def define(network, q, k, v, m):
        scores = network.add_matrix_multiply(q, NONE, k, TRANSPOSE).get_output(0)
        masked = network.add_elementwise(scores, m, trt.ElementWiseOperation.SUM).get_output(0)
        attention = network.add_matrix_multiply(_softmax(network, masked), NONE, v, NONE).get_output(0)
        reduced = network.add_reduce(masked, trt.ReduceOperation.SUM, 1 << 3, True).get_output(0)
        return network.add_elementwise(attention, reduced, trt.ElementWiseOperation.SUM).get_output(0)

    engine, kernels = _engine(define, MASKED_SHAPES)
    assert "_FusedAttention" not in kernels, kernels
    q, k, v = _inputs(SHAPES)
    m = torch.randn(MASKED_SHAPES["m"])
    scores = q @ k.transpose(-1, -2) + m
    torch.testing.assert_close(_run(engine, [q, k, v, m], MASKED_SHAPES),
                               torch.softmax(scores, -1) @ v + scores.sum(-1, keepdim=True))


def test_a_fused_step_whose_shapes_do_not_fit_runs_its_layers_with_their_constants_in_generated_code():
    """Keys shared by all heads do not fit scaled_dot_product_attention: the fused step runs its layers, whose
    scale is a constant of the step (not a weight of the program) that inductor's trace meets as a real tensor."""
    shapes = {**SHAPES, "k": (2, 1, 6, 8), "v": (2, 1, 6, 8)}
    engine, kernels = _engine(_scaled_scores, shapes, level=4)  # CPU code generation starts at level 4
    assert kernels == ["_FusedAttention"], kernels
    q, k, v = _inputs(shapes)
    torch.testing.assert_close(_run(engine, [q, k, v]), _attention(q, k, v, scale=0.3))


def test_a_masked_step_whose_shapes_do_not_fit_runs_its_layers_mask_included():
    """Keys and values shared by all heads do not fit scaled_dot_product_attention's batch dims."""
    shapes = {**MASKED_SHAPES, "k": (2, 1, 6, 8), "v": (2, 1, 6, 8)}
    engine, kernels = _engine(_float_mask_safe_softmax, shapes)
    assert kernels == ["_FusedAttention"], kernels
    q, k, v, m = _inputs(shapes)
    expected = torch.softmax((q * 0.3) @ k.transpose(-1, -2) + m, -1) @ v
    torch.testing.assert_close(_run(engine, [q, k, v, m], shapes), expected)
