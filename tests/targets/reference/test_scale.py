import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt

Mode = trt.ScaleMode
F32, F16 = trt.float32, trt.float16
RNG = np.random.default_rng(0)


def _coefficients(count, low, high, dtype=np.float32):
    return RNG.uniform(low, high, count).astype(dtype)


def _reference(x, shape, shift, scale, power):
    """(x * scale + shift) ** power with each Weights array viewed as `shape`, omitted ones at their defaults."""
    as_tensor = lambda w, default: default if w is None else torch.from_numpy(w.reshape(shape))
    return (x * as_tensor(scale, 1.0) + as_tensor(shift, 0.0)) ** as_tensor(power, 1.0)


# (input shape, mode, channel_axis (None: add_scale), count, view of the weights, which weights are given)
CASES = {
    "uniform": ((2, 3, 4, 5), Mode.UNIFORM, None, 1, (), "shift scale power"),
    "uniform_scale_only": ((2, 3, 4, 5), Mode.UNIFORM, None, 1, (), "scale"),
    "channel_nchw": ((2, 3, 4, 5), Mode.CHANNEL, None, 3, (3, 1, 1), "shift scale power"),
    "channel_rank5_is_rank_minus_3": ((1, 2, 3, 4, 5), Mode.CHANNEL, None, 3, (3, 1, 1), "shift scale"),
    "elementwise_last_three": ((2, 3, 4, 5), Mode.ELEMENTWISE, None, 60, (3, 4, 5), "shift scale power"),
    "nd_channel_axis_3": ((2, 3, 4, 5), Mode.CHANNEL, 3, 5, (5,), "shift scale power"),
    "nd_channel_axis_0": ((2, 3, 4, 5), Mode.CHANNEL, 0, 2, (2, 1, 1, 1), "scale power"),
    "nd_elementwise_axis_2": ((2, 3, 4, 5), Mode.ELEMENTWISE, 2, 20, (4, 5), "shift power"),
    "nd_uniform_rank6": ((1, 2, 1, 3, 2, 2), Mode.UNIFORM, 1, 1, (), "shift scale power"),
}


@pytest.mark.parametrize("as_weights", [False, True], ids=["numpy", "Weights"])
@pytest.mark.parametrize("shape, mode, axis, count, view, given", CASES.values(), ids=CASES.keys())
def test_matches_pytorch(run_network, shape, mode, axis, count, view, given, as_weights):
    x = torch.rand(shape) + 0.5  # positive, so non-integer powers stay real
    arrays = {"shift": _coefficients(count, 0.0, 1.0), "scale": _coefficients(count, 0.5, 2.0),
              "power": _coefficients(count, 0.5, 2.0)}
    arrays = {name: arrays[name] if name in given.split() else None for name in arrays}
    wrap = lambda a: trt.Weights(a) if as_weights and a is not None else a

    def define(net, a):
        weights = [wrap(arrays[name]) for name in ("shift", "scale", "power")]
        layer = net.add_scale(a, mode, *weights) if axis is None else net.add_scale_nd(a, mode, *weights, axis)
        assert layer.channel_axis == (len(shape) - 3 if axis is None else axis)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), _reference(x, view, **arrays))


def test_fp16_with_fp16_weights(run_network):
    x = torch.rand(2, 3, 4, 4) + 0.5
    shift, scale = _coefficients(3, 0, 1, np.float16), _coefficients(3, 0.5, 2, np.float16)
    out = run_network(lambda net, a: net.add_scale(a, Mode.CHANNEL, shift, scale).get_output(0), [x.half()])
    assert out.dtype == torch.float16
    expected = _reference(x, (3, 1, 1), shift.astype(np.float32), scale.astype(np.float32), None)
    torch.testing.assert_close(out.float(), expected, atol=1e-2, rtol=1e-2)


def test_attributes_read_back(run_network):
    scale = np.full(3, 2.0, np.float32)

    def define(net, a):
        layer = net.add_scale_nd(a, Mode.CHANNEL, scale=scale, channel_axis=1)
        assert (layer.type, layer.mode, layer.shift, layer.power) == (trt.LayerType.SCALE, Mode.CHANNEL, None, None)
        assert layer.scale.dtype == trt.float32 and list(layer.scale.numpy()) == [2.0, 2.0, 2.0]
        return layer.get_output(0)

    x = torch.randn(1, 3, 2, 2)
    torch.testing.assert_close(run_network(define, [x]), x * 2)


def test_add_scale_nd_requires_channel_axis():
    network = trt.Builder(trt.Logger()).create_network(0)
    x = network.add_input("x", F32, (1, 3, 2, 2))
    with pytest.raises(TypeError, match="channel_axis"):
        network.add_scale_nd(x, Mode.UNIFORM, None, np.ones(1, np.float32))


W1, W3 = np.ones(1, np.float32), np.ones(3, np.float32)
REFUSED = {
    "int32": ((1, 3, 2, 2), trt.int32, lambda net, a: net.add_scale(a, Mode.UNIFORM, W1), "float input"),
    "rank3": ((3, 2, 2), F32, lambda net, a: net.add_scale(a, Mode.UNIFORM, W1), "rank >= 4"),
    "uniform_count": ((1, 3, 2, 2), F32, lambda net, a: net.add_scale(a, Mode.UNIFORM, W3), "needs 1 weights"),
    "channel_count": ((1, 4, 2, 2), F32, lambda net, a: net.add_scale(a, Mode.CHANNEL, None, W3, None),
                      "CHANNEL scale needs 4 weights"),
    "elementwise_count": ((1, 3, 2, 2), F32, lambda net, a: net.add_scale(a, Mode.ELEMENTWISE, None, None, W3),
                          "ELEMENTWISE power needs 12 weights"),
    "nd_count": ((1, 3, 2, 5), F32, lambda net, a: net.add_scale_nd(a, Mode.CHANNEL, W3, None, None, 3),
                 "needs 5 weights for input (1, 3, 2, 5) (channel_axis 3)"),
    "weights_dtype": ((1, 3, 2, 2), F16, lambda net, a: net.add_scale(a, Mode.CHANNEL, W3),
                      "shift weights are FLOAT but the input is torch.float16"),
    "channel_axis_range": ((1, 3, 2, 2), F32, lambda net, a: net.add_scale_nd(a, Mode.UNIFORM, W1, None, None, 4),
                           "channel_axis 4 is outside"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, define, message):
    assert message in refused(define, [(shape, dtype)])
