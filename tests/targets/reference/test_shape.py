"""IShapeLayer, and shape tensors: the runtime shapes shuffle, slice and fill take through set_input."""

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt
from torch_trt.targets.reference.layers.shape import known

from .conftest import RecordingLogger, host_engine

CASES = {
    "rank3": torch.randn(2, 3, 4),
    "rank1": torch.randn(5),
    "rank0": torch.tensor(1.5),
    "empty_dim": torch.randn(2, 0),
    "bool": torch.ones(1, 7, dtype=torch.bool),
    "int32": torch.ones(3, 1, dtype=torch.int32),
    "fp16": torch.randn(4, 4).half(),
}


@pytest.mark.parametrize("x", CASES.values(), ids=CASES.keys())
def test_shape_returns_int64_dims(run_network, x):
    out = run_network(lambda net, a: net.add_shape(a).get_output(0), [x])
    torch.testing.assert_close(out, torch.tensor(x.shape, dtype=torch.int64))


def test_shape_output_is_rank_long_int64_even_for_dynamic_dims():
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_shape(network.add_input("x", trt.float32, (-1, 3, -1)))
    assert layer.type == trt.LayerType.SHAPE
    assert (layer.get_output(0).shape, layer.get_output(0).dtype) == ((3,), trt.int64)


# -- shape tensors: computed from shapes and constants, read by shuffle (1), slice (1-3, 5) and fill (0) --------

M, OP = trt.SampleMode, trt.ElementWiseOperation


def _run(engine, x):
    context = engine.create_execution_context()
    context.set_input_shape("x", tuple(x.shape))
    y = torch.empty(tuple(context.get_tensor_shape("y")),
                    dtype=trt.types.TORCH_DTYPE[engine.get_tensor_dtype("y")])
    context.set_tensor_address("x", x.data_ptr())
    context.set_tensor_address("y", y.data_ptr())
    assert context.execute_async_v3(0)
    return y


def _constant(network, values, dtype=np.int64):
    values = np.array(values, dtype=dtype)
    return network.add_constant(values.shape, trt.Weights(values)).get_output(0)


def _dim(network, x, dim):
    """Dim `dim` of x's shape as a 1-D INT64 shape tensor of one element."""
    shape = network.add_shape(x).get_output(0)
    return network.add_gather(shape, _constant(network, [dim], np.int32), 0).get_output(0)


def _columns_by_rows_by_one(network, x):
    """x [R, C] reshaped to [C, R * 1, 1]: sizes computed from x's shape."""
    rows = network.add_elementwise(_dim(network, x, 0), _constant(network, [1]), OP.PROD).get_output(0)
    dims = network.add_concatenation([_dim(network, x, 1), rows, _constant(network, [1])])
    dims.axis = 0
    layer = network.add_shuffle(x)
    layer.set_input(1, dims.get_output(0))
    return layer.get_output(0)


@pytest.mark.parametrize("level", [3, 4], ids=["interpreted", "generated"])  # CPU code generation starts at 4
def test_shuffle_reshapes_to_a_shape_tensor(level):
    output, engine = host_engine(_columns_by_rows_by_one, (-1, -1), level)
    assert tuple(output.shape) == (-1, -1, 1)
    for shape in ((3, 4), (5, 8), (3, 4)):
        x = torch.randn(shape)
        torch.testing.assert_close(_run(engine, x), x.reshape(shape[1], shape[0], 1))


def test_shuffle_shape_input_replaces_reshape_dims_and_back():
    network = trt.Builder(trt.Logger()).create_network(0)
    x = network.add_input("x", trt.float32, (2, 6))
    layer = network.add_shuffle(x)
    layer.set_input(1, _constant(network, [3, -1]))
    assert (layer.reshape_dims, layer.num_inputs, tuple(layer.get_output(0).shape)) == (None, 2, (3, 4))
    layer.reshape_dims = (6, 2)  # static dims replace the shape tensor
    assert (layer.num_inputs, tuple(layer.get_output(0).shape)) == (1, (6, 2))


def _slice_to(network, x):
    """x[:, 1:C-1] along dim 1, with the size given as a shape tensor and the start and stride as Dims."""
    size = network.add_elementwise(_dim(network, x, 1), _constant(network, [2]), OP.SUB).get_output(0)
    layer = network.add_slice(x, (1,), (0,), (1,))
    layer.axes = (1,)
    layer.set_input(2, size)
    return layer.get_output(0)


def test_slice_takes_its_size_as_a_shape_tensor():
    output, engine = host_engine(_slice_to, (2, -1))
    assert tuple(output.shape) == (2, -1)
    for columns in (3, 7):
        x = torch.randn(2, columns)
        torch.testing.assert_close(_run(engine, x), x[:, 1:columns - 1])


def _broadcast_rows(network, x):
    """x [R, 1] read with stride 0 along dim 1 to [R, R]: size and stride both shape tensors."""
    rows = _dim(network, x, 0)
    sizes = network.add_concatenation([rows, rows])
    sizes.axis = 0
    layer = network.add_slice(x, (0, 0), (1, 1), (1, 1))
    layer.set_input(2, sizes.get_output(0))
    layer.set_input(3, _constant(network, [1, 0], np.int32))
    assert (layer.shape, layer.stride, layer.start) == (None, None, (0, 0))
    return layer.get_output(0)


def test_slice_size_and_stride_tensors_broadcast():
    _, engine = host_engine(_broadcast_rows, (-1, 1))
    x = torch.randn(5, 1)
    torch.testing.assert_close(_run(engine, x), x.expand(5, 5))


def test_slice_attribute_replaces_its_tensor():
    network = trt.Builder(trt.Logger()).create_network(0)
    x = network.add_input("x", trt.float32, (4, 6))
    layer = network.add_slice(x, (0, 0), (2, 2), (1, 1))
    layer.set_input(1, _constant(network, [1, 2]))
    assert tuple(layer.get_output(0).shape) == (2, 2) and layer.start is None
    layer.start = (2, 4)
    assert layer.get_input(1) is None and layer.start == (2, 4)


def _arange_of_columns(network, x, output_type=trt.int64):
    """arange(C) as a LINSPACE fill: dims from x's shape, start 0, delta 1."""
    layer = network.add_fill((1,), trt.FillOperation.LINSPACE, output_type)
    layer.set_input(0, _dim(network, x, 1))
    dtype = {trt.int64: np.int64, trt.int32: np.int32, trt.float32: np.float32}[output_type]
    layer.set_input(1, network.add_constant((), trt.Weights(np.array(0, dtype=dtype))).get_output(0))
    layer.set_input(2, _constant(network, [1], dtype))
    assert (layer.shape, layer.alpha, layer.beta) == (None, None, None)
    return layer.get_output(0)


@pytest.mark.parametrize("output_type, dtype", [(trt.int64, torch.int64), (trt.int32, torch.int32),
                                                (trt.float32, torch.float32)], ids=["int64", "int32", "float"])
def test_fill_linspace_of_a_runtime_length(output_type, dtype):
    output, engine = host_engine(lambda network, x: _arange_of_columns(network, x, output_type), (2, -1))
    assert tuple(output.shape) == (-1,) and output.dtype == output_type
    for columns in (1, 6):
        torch.testing.assert_close(_run(engine, torch.randn(2, columns)), torch.arange(columns, dtype=dtype))


def test_fill_linspace_2d_adds_a_delta_per_dim():
    def define(network, x):
        layer = network.add_fill((1,), trt.FillOperation.LINSPACE, trt.float32)
        layer.set_input(0, network.add_shape(x).get_output(0))
        layer.set_input(1, network.add_constant((), trt.Weights(np.array(1.5, np.float32))).get_output(0))
        layer.set_input(2, _constant(network, [10, 1], np.float32))
        return layer.get_output(0)

    _, engine = host_engine(define, (-1, 3))
    expected = 1.5 + 10 * torch.arange(4.0).view(4, 1) + torch.arange(3.0).view(1, 3)
    torch.testing.assert_close(_run(engine, torch.randn(4, 3)), expected)


def test_fill_random_uniform_draws_within_its_bounds():
    def define(network, x):
        layer = network.add_fill((1,), trt.FillOperation.RANDOM_UNIFORM)
        layer.set_input(0, network.add_shape(x).get_output(0))
        layer.alpha, layer.beta = -2.0, -1.0
        assert not layer.is_alpha_beta_int64()
        return layer.get_output(0)

    _, engine = host_engine(define, (-1, 64))
    values = _run(engine, torch.randn(8, 64))
    assert values.shape == (8, 64) and values.min() >= -2 and values.max() < -1 and values.std() > 0


def test_a_small_fill_of_a_shape_tensor_is_one_too():
    """A LINSPACE of shape tensors is a shape tensor when it is small: here [R * 4], a reshape's dims."""
    def define(network, x):
        rows = network.add_gather(network.add_shape(x).get_output(0), _constant(network, 0, np.int32), 0)
        volume = network.add_elementwise(rows.get_output(0), _constant(network, 4), OP.PROD).get_output(0)
        fill = network.add_fill((1,), trt.FillOperation.LINSPACE, trt.int64)
        fill.set_input(0, _constant(network, [1]))
        fill.set_input(1, volume)
        fill.set_input(2, _constant(network, [1]))
        layer = network.add_shuffle(x)
        layer.set_input(1, fill.get_output(0))
        return layer.get_output(0)

    output, engine = host_engine(define, (-1, 4))
    assert tuple(output.shape) == (-1,)
    x = torch.randn(3, 4)
    torch.testing.assert_close(_run(engine, x), x.reshape(12))


# -- shape tensors made by broadcasting (a stride-0 slice, an elementwise) or a gather set up after add_gather_v2
# carry their values at their own shape: each makes the reshape dims of x ------------------------------------------

def _then(network, x, dims):
    """x reshaped to the shape tensor `dims`."""
    layer = network.add_shuffle(x)
    layer.set_input(1, dims)
    return layer.get_output(0)


def _repeated(network, values, times):
    """The shape tensor `values` ([v]) read `times` times with stride 0: [v] * times."""
    return network.add_slice(values, (0,), (times,), (0,)).get_output(0)


def _broadcast(network, values, times):
    """[v] + [0] * times: elementwise broadcasting [v] to [v] * times."""
    return network.add_elementwise(values, _constant(network, [0] * times), OP.SUM).get_output(0)


def _any_rows_then(network, dims):
    """[-1] + dims: as many rows as x's volume leaves, then `dims`."""
    dims = network.add_concatenation([_constant(network, [-1]), dims])
    dims.axis = 0
    return dims.get_output(0)


def _gathered(network, axis):
    """[3, 2] gathered (ELEMENT) from a [1, 4] shape tensor along `axis`, set after add_gather_v2 as converters do: on
    axis 0 (the default it is added with) index 1 reads outside the data (BERT's token_type_ids gather)."""
    layer = network.add_gather_v2(_constant(network, [[2, 3, 9, 9]]), _constant(network, [[1, 0]], np.int32),
                                  trt.GatherMode.ELEMENT)
    layer.axis = axis
    flat = network.add_shuffle(layer.get_output(0))
    flat.reshape_dims = (2,)
    return flat.get_output(0)


BROADCAST_VALUES = {
    "slice_stride_0_of_a_constant": ((8,), lambda net, x: _repeated(net, _constant(net, [2]), 3), (2, 2, 2)),
    "elementwise_broadcast_of_constants": ((8,), lambda net, x: _broadcast(net, _constant(net, [2]), 3), (2, 2, 2)),
    "slice_stride_0_of_a_shape": ((-1, 3), lambda net, x: _any_rows_then(net, _repeated(net, _dim(net, x, 1), 2)),
                                  (-1, 3, 3)),
    "elementwise_broadcast_of_a_shape": ((-1, 3), lambda net, x: _any_rows_then(net, _broadcast(net, _dim(net, x, 1),
                                                                                                2)), (-1, 3, 3)),
    "gather_whose_axis_is_set_after_add": ((6,), lambda net, x: _gathered(net, 1), (3, 2)),
}


@pytest.mark.parametrize("shape, dims, expected", BROADCAST_VALUES.values(), ids=BROADCAST_VALUES.keys())
def test_broadcast_and_gathered_shape_tensors_keep_their_values(shape, dims, expected):
    _, engine = host_engine(lambda network, x: _then(network, x, dims(network, x)), shape)
    for rows in (3, 6) if -1 in shape else (shape[0],):
        x = torch.randn((rows,) + shape[1:])
        torch.testing.assert_close(_run(engine, x), x.reshape(expected))


def test_a_gather_reading_outside_its_shape_tensor_is_no_shape_tensor(refused_at_build):
    errors = refused_at_build(lambda network, x: _then(network, x, _gathered(network, 0)), [((6,), trt.float32)])
    assert "shuffle reshape dims (input 1) must be a shape tensor" in errors


def test_values_at_another_shape_than_their_tensor_fail_loudly():
    """A layer carrying values of its input's size (a broadcast's, say) is a bug in the reference: never a shape."""
    with pytest.raises(AssertionError, match=r"internal error .* values of shape \(1,\) carried by a shape tensor "
                                             r"of shape \(3,\)"):
        known(torch.empty(3, dtype=torch.int64, device="meta"), torch.tensor([2]))


def _shuffle_to(dims_of):
    def define(network, x, *extra):
        layer = network.add_shuffle(x)
        layer.set_input(1, dims_of(network, x, *extra))
        return layer
    return define


def _fill(op=trt.FillOperation.LINSPACE, output_type=trt.float32, dims=lambda net, x: _dim(net, x, 0),
          alpha=None, beta=None):
    def define(network, x):
        layer = network.add_fill((1,), op, output_type)
        if layer is None:
            return None
        layer.set_input(0, dims(network, x))
        for index, value in ((1, alpha), (2, beta)):
            if value is not None:
                layer.set_input(index, _constant(network, *value))
        return layer
    return define


F32_4, I64 = ((4, 6), trt.float32), np.int64
REFUSALS = {
    "shuffle_dims_from_data": (_shuffle_to(lambda net, x, dims: dims), [F32_4, ((2,), trt.int64)],
                               "shuffle reshape dims (input 1) must be a shape tensor"),
    "shuffle_dims_float": (_shuffle_to(lambda net, x: _constant(net, [4, 6], np.float32)), [F32_4],
                           "must be a 1-D INT32 or INT64 shape tensor"),
    "shuffle_dims_2d": (_shuffle_to(lambda net, x: _constant(net, [[4, 6]])), [F32_4], "must be a 1-D INT32"),
    "shuffle_dims_over_64": (_shuffle_to(lambda net, x: _constant(net, [1] * 65)), [F32_4], "at most 64 elements"),
    "fill_dims_float": (_fill(dims=lambda net, x: _constant(net, [3], np.float32)), [F32_4], "1-D INT32 or INT64"),
    "fill_linspace_half": (_fill(output_type=trt.float16), [F32_4], "a LINSPACE fill outputs FLOAT, INT32, INT64"),
    "fill_random_int": (_fill(trt.FillOperation.RANDOM_NORMAL, trt.int32), [F32_4], "outputs FLOAT, HALF"),
    "fill_alpha_alone": (_fill(alpha=([0.0], np.float32)), [F32_4], "must be given together"),
    "fill_beta_per_dim": (_fill(alpha=(0.0, np.float32), beta=([1.0, 1.0], np.float32)), [F32_4],
                          "one delta per output dim (1)"),
    "fill_linspace_type": (_fill(alpha=(0, I64), beta=([1], I64)), [F32_4], "must have the output type FLOAT"),
    "fill_static_linspace_2d": (_fill(dims=lambda net, x: net.add_shape(x).get_output(0)), [F32_4],
                                "a fill of rank 2 needs alpha and beta tensors"),
    "fill_without_inputs": (lambda net, x: net.add_fill((3,), trt.FillOperation.LINSPACE), [F32_4],
                            "give the dimensions as a shape tensor"),
}


@pytest.mark.parametrize("define, specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_shape_tensor_refusals(refused_at_build, define, specs, message):
    assert message in refused_at_build(define, specs)


@pytest.mark.parametrize("make", [lambda net: net.add_shuffle(net.get_input(0)),
                                  lambda net: net.add_slice(net.get_input(0), (0,), (1,), (1,)),
                                  lambda net: net.add_fill((1,), trt.FillOperation.LINSPACE)],
                         ids=["shuffle", "slice", "fill"])
def test_set_input_refuses_an_index_the_layer_lacks(make):
    logger = RecordingLogger()
    network = trt.Builder(logger).create_network(0)
    network.add_input("x", trt.int64, (2,))
    layer = make(network)
    layer.set_input(6, network.get_input(0))
    assert "set_input(6)" in " ".join(logger.errors())
