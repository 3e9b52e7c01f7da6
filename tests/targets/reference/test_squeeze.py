import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt


def _axes(net, values, dtype=np.int64):
    """A constant 1-D axes tensor, as TensorRT requires."""
    return net.add_constant((len(values),), np.array(values, dtype=dtype)).get_output(0)


X = torch.randn(3, 1, 4, 1)
# (input, axes or None, axes dtype, expected)
SQUEEZES = {
    "listed": (X, [1, -1], np.int64, X.reshape(3, 4)),
    "one_int32": (X, [3], np.int32, X.squeeze(3)),
    "all_static_ones": (X, None, None, X.reshape(3, 4)),
    "zero_dim_kept": (torch.randn(0, 1, 3), None, None, torch.randn(0, 3)),
    "bool": (X > 0, [1], np.int64, (X > 0).squeeze(1)),
    "int32": (X.int(), [-3], np.int32, X.int().squeeze(1)),
    "fp16": (X.half(), [1, 3], np.int64, X.half().reshape(3, 4)),
}


@pytest.mark.parametrize("x, axes, dtype, expected", SQUEEZES.values(), ids=SQUEEZES.keys())
def test_squeeze_matches_torch(run_network, x, axes, dtype, expected):
    def define(net, a):
        return net.add_squeeze(a, None if axes is None else _axes(net, axes, dtype)).get_output(0)

    torch.testing.assert_close(run_network(define, [x]), expected)


Y = torch.randn(3, 4)
UNSQUEEZES = {
    "front_and_back": (Y, [0, -1], np.int64, Y.reshape(1, 3, 4, 1)),
    "middle_int32": (Y, [1], np.int32, Y.unsqueeze(1)),
    "unordered": (Y, [3, 0], np.int64, Y.reshape(1, 3, 4, 1)),
    "scalar": (torch.tensor(2.0), [0, 1], np.int64, torch.tensor(2.0).reshape(1, 1)),
    "bool": (Y > 0, [2], np.int64, (Y > 0).unsqueeze(2)),
    "int64": (Y.long(), [-2], np.int64, Y.long().unsqueeze(-2)),
    "fp16": (Y.half(), [0], np.int32, Y.half().unsqueeze(0)),
}


@pytest.mark.parametrize("x, axes, dtype, expected", UNSQUEEZES.values(), ids=UNSQUEEZES.keys())
def test_unsqueeze_matches_torch(run_network, x, axes, dtype, expected):
    out = run_network(lambda net, a: net.add_unsqueeze(a, _axes(net, axes, dtype)).get_output(0), [x])
    torch.testing.assert_close(out, expected)


def test_squeeze_without_axes_keeps_dynamic_dims():
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_squeeze(network.add_input("x", trt.float32, (-1, 1, 3)))
    assert (layer.type, layer.num_inputs, layer.get_output(0).shape) == (trt.LayerType.SQUEEZE, 1, (-1, 3))


def test_axes_set_after_add_squeeze(run_network):
    def define(net, a):
        axes = _axes(net, [1])
        layer = net.add_squeeze(a)
        layer.set_input(1, axes)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [X]), X.squeeze(1))


F32_3141 = ((3, 1, 4, 1), trt.float32)
REFUSALS = {
    "squeeze_not_one": (lambda net, a: net.add_squeeze(a, _axes(net, [0])), [F32_3141], "has size 3, not 1"),
    "squeeze_range": (lambda net, a: net.add_squeeze(a, _axes(net, [4])), [F32_3141], "must lie in [-4, 3]"),
    "squeeze_repeat": (lambda net, a: net.add_squeeze(a, _axes(net, [1, -3])), [F32_3141], "more than once"),
    "squeeze_dynamic_dim": (lambda net, a: net.add_squeeze(a, _axes(net, [0])), [((-1, 2), trt.float32)],
                            "has size -1, not 1"),
    "axes_float": (lambda net, a: net.add_squeeze(a, _axes(net, [1], np.float32)), [F32_3141],
                   "1-D INT32/INT64 tensor, got torch.float32"),
    "axes_rank": (lambda net, a: net.add_squeeze(a, net.add_constant((1, 1), np.array([[1]])).get_output(0)),
                  [F32_3141], "of shape (1, 1)"),
    "axes_not_constant": (lambda net, a, axes: net.add_squeeze(a, axes), [F32_3141, ((1,), trt.int64)],
                          "must be the output of an IConstantLayer"),
    "unsqueeze_no_axes": (lambda net, a: net.add_unsqueeze(a, None), [F32_3141], "needs an axes tensor"),
    "unsqueeze_range": (lambda net, a: net.add_unsqueeze(a, _axes(net, [-6])), [F32_3141], "must lie in [-5, 4]"),
    "unsqueeze_repeat": (lambda net, a: net.add_unsqueeze(a, _axes(net, [0, -6])), [F32_3141], "more than once"),
    "unsqueeze_rank": (lambda net, a: net.add_unsqueeze(a, _axes(net, list(range(5)))), [F32_3141],
                       "rank 9 exceeds 8"),
    "unsqueeze_not_constant": (lambda net, a, axes: net.add_unsqueeze(a, net.add_identity(axes).get_output(0)),
                               [F32_3141, ((1,), trt.int32)], "must be the output of an IConstantLayer"),
}


@pytest.mark.parametrize("define, specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_squeeze_refusals(refused, define, specs, message):
    assert message in refused(define, specs)


def test_squeeze_axes_changed_after_add_refused_at_build(refused_at_build):
    def define(net, a):
        layer = net.add_squeeze(a, _axes(net, [1]))
        layer.set_input(1, _axes(net, [2]))
        return layer

    assert "has size 4, not 1" in refused_at_build(define, [F32_3141])
