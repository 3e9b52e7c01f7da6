import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torch_trt.targets.reference as trt

M = trt.SampleMode
X34 = torch.arange(12, dtype=torch.float32).reshape(3, 4)
X5 = torch.arange(5, dtype=torch.float32)
X125 = torch.arange(10, dtype=torch.float32).reshape(1, 2, 5)


# (input, start, shape, stride, mode, expected)
CASES = {
    "window": (X34, (1, 0), (2, 2), (1, 2), M.STRICT_BOUNDS, X34[1:3, 0:4:2]),
    "negative_stride": (X34, (2, 3), (3, 4), (-1, -1), M.STRICT_BOUNDS, X34.flip(0, 1)),
    "zero_stride": (X34, (1, 2), (3, 2), (0, 0), M.STRICT_BOUNDS, X34[1, 2].expand(3, 2)),
    "empty": (X34, (0, 0), (0, 4), (1, 1), M.STRICT_BOUNDS, X34[:0]),
    "wrap_roll": (X5, (2,), (5,), (1,), M.WRAP, torch.roll(X5, -2)),
    "wrap_tile": (X5, (0,), (12,), (1,), M.WRAP, X5.repeat(3)[:12]),
    "wrap_negative": (X5, (-1,), (5,), (-1,), M.WRAP, X5.flip(0)),
    "clamp": (X125, (0, 0, -2), (1, 2, 10), (1, 1, 1), M.CLAMP, F.pad(X125, (2, 3), mode="replicate")),
    "reflect": (X125, (0, 0, -2), (1, 2, 10), (1, 1, 1), M.REFLECT, F.pad(X125, (2, 3), mode="reflect")),
    "reflect_far": (X5, (-9,), (25,), (1,), M.REFLECT, torch.from_numpy(np.pad(X5.numpy(), (9, 11), "reflect"))),
    "reflect_single": (X5[2:3], (-3,), (4,), (1,), M.REFLECT, X5[2:3].expand(4)),
    "reflect_2d": (X34, (-1, 1), (3, 4), (1, 1), M.REFLECT, X34[[1, 0, 1]][:, [1, 2, 3, 2]]),
    "fill": (X34, (-1, -1), (5, 7), (1, 1), M.FILL, F.pad(X34, (1, 2, 1, 1))),
    "fill_strided": (X5, (-2,), (5,), (2,), M.FILL, torch.tensor([0.0, 0.0, 2.0, 4.0, 0.0])),
    "int32": (X34.int(), (0, 1), (3, 3), (1, 1), M.STRICT_BOUNDS, X34.int()[:, 1:]),
    "int64_fill": (X34.long(), (0, -1), (3, 5), (1, 1), M.FILL, F.pad(X34.long(), (1, 0))),
    "bool_wrap": (X34 > 5, (0, 2), (3, 4), (1, 1), M.WRAP, torch.roll(X34 > 5, -2, 1)),
    "fp16_reflect": (X5.half(), (-2,), (9,), (1,), M.REFLECT, torch.tensor([2, 1, 0, 1, 2, 3, 4, 3, 2]).half()),
}


@pytest.mark.parametrize("x, start, shape, stride, mode, expected", CASES.values(), ids=CASES.keys())
def test_slice_matches_torch(run_network, x, start, shape, stride, mode, expected):
    def define(net, a):
        layer = net.add_slice(a, start, shape, stride)
        layer.mode = mode
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), expected)


def test_slice_fill_value_input(run_network):
    def define(net, a):
        fill = net.add_constant((), np.array(7.5, dtype=np.float32)).get_output(0)
        layer = net.add_slice(a, (-1, 0), (5, 4), (1, 1))
        layer.mode = M.FILL
        layer.set_input(4, fill)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [X34]), F.pad(X34, (0, 0, 1, 1), value=7.5))


def test_slice_axes_attribute(run_network):
    def define(net, a):
        layer = net.add_slice(a, (1,), (2,), (1,))
        layer.axes = (-1,)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [X34]), X34[:, 1:3])


def test_slice_defaults():
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_slice(network.add_input("x", trt.float32, (3, 4)), (0, 0), (2, 2), (1, 1))
    assert (layer.type, layer.mode, layer.axes, layer.start) == (trt.LayerType.SLICE, M.STRICT_BOUNDS, None, (0, 0))


def _slice(start=(0, 0), shape=(2, 2), stride=(1, 1), mode=None, axes=None, inputs=()):
    """A define that slices in0, sets mode/axes and wires the extra inputs at `inputs`; refused_at_build builds it."""
    def define(net, a, *extra):
        layer = net.add_slice(a, start, shape, stride)
        if layer is None:
            return None
        if mode is not None:
            layer.mode = mode
        if axes is not None:
            layer.axes = axes
        for index, tensor in zip(inputs, extra):
            layer.set_input(index, tensor)
        return layer
    return define


F32_33, F32_SCALAR = ((3, 3), trt.float32), ((), trt.float32)
REFUSALS = {
    "lengths_differ": (_slice(start=(0,)), [F32_33], "start (0,), shape (2, 2) and stride (1, 1) must have the same"),
    "length_rank": (_slice((0,), (1,), (1,)), [F32_33], "have 1 entries, need one per input dim (2)"),
    "negative_shape": (_slice(shape=(1, -1)), [F32_33], "negative"),
    "strict_bounds": (_slice(start=(2, 0)), [F32_33], "reads position 3 of dim 0 (size 3) with STRICT_BOUNDS"),
    "strict_negative_stride": (_slice(stride=(-1, 1)), [F32_33], "reads position -1 of dim 0"),
    "wrap_empty_dim": (_slice(mode=M.WRAP), [((0, 3), trt.float32)], "cannot read dim 0 of size 0"),
    # A network input is data, not a shape tensor: shape tensors are computed from shapes and constants.
    "start_from_data": (_slice(inputs=(1,)), [F32_33, ((2,), trt.int32)], "start (input 1) must be a shape tensor"),
    "axes_from_data": (_slice(inputs=(5,)), [F32_33, ((1,), trt.int32)], "axes (input 5) must be a shape tensor"),
    "start_float": (_slice(inputs=(1,)), [F32_33, ((2,), trt.float32)], "start (input 1) must be a 1-D INT32 or "
                    "INT64 shape tensor"),
    "size_2d": (_slice(inputs=(2,)), [F32_33, ((1, 2), trt.int64)], "shape (input 2) must be a 1-D INT32"),
    "fill_value_mode": (_slice(mode=M.CLAMP, inputs=(4,)), [F32_33, F32_SCALAR], "needs SampleMode.FILL"),
    "fill_value_rank": (_slice(mode=M.FILL, inputs=(4,)), [F32_33, ((1,), trt.float32)], "0-D"),
    "fill_value_dtype": (_slice(mode=M.FILL, inputs=(4,)), [F32_33, ((), trt.int32)], "does not convert"),
    "axes_length": (_slice(axes=(0,)), [F32_33], "have 2 entries, need one per axis (1)"),
    "axes_range": (_slice((0,), (1,), (1,), axes=(2,)), [F32_33], "must lie in [-2, 1]"),
    "axes_repeat": (_slice(axes=(0, -2)), [F32_33], "repeat an axis"),
}


@pytest.mark.parametrize("define, specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_slice_refusals(refused_at_build, define, specs, message):
    assert message in refused_at_build(define, specs)


def test_slice_out_of_range_waits_for_mode():
    """add_slice accepts reads out of range: TensorRT converters set mode (e.g. FILL) after adding."""
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_slice(network.add_input("x", trt.float32, (3,)), (-2,), (7,), (1,))
    assert layer is not None and layer.mode == M.STRICT_BOUNDS
    layer.mode = M.FILL
    assert layer.get_output(0).shape == (7,)


def test_slice_strict_bounds_on_dynamic_dim_raises_at_run_time():
    """A dynamic dim is only known when the engine runs: reading past it raises then."""
    builder = trt.Builder(trt.Logger())
    network = builder.create_network(0)
    x = network.add_input("x", trt.float32, (-1,))
    out = network.add_slice(x, (0,), (4,), (1,)).get_output(0)
    out.name = "out"
    network.mark_output(out)
    for tensor in (x, out):
        tensor.location = trt.TensorLocation.HOST
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1,), (4,), (8,))
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    engine = trt.Runtime(builder.logger).deserialize_cuda_engine(builder.build_serialized_network(network, config))
    context = engine.create_execution_context()
    x_value, out_value = torch.arange(2.0), torch.empty(4)
    assert context.set_input_shape("x", (2,)) and tuple(context.get_tensor_shape("out")) == (4,)
    context.set_tensor_address("x", x_value.data_ptr())
    context.set_tensor_address("out", out_value.data_ptr())
    with pytest.raises(IndexError, match=r"reads position 3 of dim 0 \(size 2\) with STRICT_BOUNDS"):
        context.execute_async_v3(0)
