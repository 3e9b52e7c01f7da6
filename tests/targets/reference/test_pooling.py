import pytest
import torch
import torch.nn.functional as F

import torch_trt.targets.reference as trt

P, T = trt.PaddingMode, trt.PoolingType
DOWN, UP, UPPER, LOWER = P.EXPLICIT_ROUND_DOWN, P.EXPLICIT_ROUND_UP, P.SAME_UPPER, P.SAME_LOWER
INF = float("-inf")


def _pool(net, a, kind, window, **attributes):
    """add_pooling_nd, then set attributes afterwards, as converters do."""
    layer = net.add_pooling_nd(a, kind, window)
    for name, value in attributes.items():
        setattr(layer, name, value)
    return layer


X = torch.randn(2, 3, 8, 8)
X7, X3D = torch.randn(1, 2, 7, 7), torch.randn(1, 2, 6, 5, 7)
# (input, type, window, attributes set after add_pooling_nd, expected from torch)
CASES = {
    "max": (X, T.MAX, (2, 2), dict(stride_nd=(2, 2)), F.max_pool2d(X, 2, 2)),
    "max_default_stride_1": (X, T.MAX, (3, 2), {}, F.max_pool2d(X, (3, 2), 1)),
    "max_padded": (X, T.MAX, (3, 3), dict(stride_nd=(2, 2), padding_nd=(1, 1)), F.max_pool2d(X, 3, 2, 1)),
    "max_padded_past_half_a_window": (X, T.MAX, (3, 3), dict(padding_nd=(2, 2)),  # more than PyTorch's call takes
                                      F.max_pool2d(F.pad(X, (2, 2, 2, 2), value=INF), 3, 1)),
    "max_asymmetric": (X, T.MAX, (2, 2), dict(pre_padding=(1, 0), post_padding=(0, 1)),
                       F.max_pool2d(F.pad(X, (0, 1, 1, 0), value=INF), 2, 1)),
    "avg_excludes_padding": (X, T.AVERAGE, (3, 3), dict(stride_nd=(2, 2), padding_nd=(1, 1)),
                             F.avg_pool2d(X, 3, 2, 1, count_include_pad=False)),
    "avg_includes_padding": (X, T.AVERAGE, (3, 3), dict(padding_nd=(1, 1), average_count_excludes_padding=False),
                             F.avg_pool2d(X, 3, 1, 1, count_include_pad=True)),
    "max_round_up": (X, T.MAX, (3, 3), dict(stride_nd=(2, 2), padding_mode=UP),
                     F.max_pool2d(X, 3, 2, ceil_mode=True)),
    "avg_round_up_includes": (X, T.AVERAGE, (3, 3), dict(stride_nd=(2, 2), padding_nd=(1, 1), padding_mode=UP,
                                                         average_count_excludes_padding=False),
                              F.avg_pool2d(X, 3, 2, 1, ceil_mode=True, count_include_pad=True)),
    "avg_round_up_excludes": (X7, T.AVERAGE, (2, 2), dict(stride_nd=(2, 2), padding_mode=UP),
                              F.avg_pool2d(X7, 2, 2, ceil_mode=True, count_include_pad=False)),
    "same_upper": (X7, T.MAX, (3, 3), dict(stride_nd=(2, 2), padding_mode=UPPER), F.max_pool2d(X7, 3, 2, 1)),
    "same_upper_odd": (X, T.MAX, (2, 2), dict(padding_mode=UPPER),
                       F.max_pool2d(F.pad(X, (0, 1, 0, 1), value=INF), 2, 1)),
    "same_lower_odd": (X, T.MAX, (2, 2), dict(padding_mode=LOWER),
                       F.max_pool2d(F.pad(X, (1, 0, 1, 0), value=INF), 2, 1)),
    "blend": (X, T.MAX_AVERAGE_BLEND, (2, 2), dict(stride_nd=(2, 2), blend_factor=0.25),
              0.75 * F.max_pool2d(X, 2, 2) + 0.25 * F.avg_pool2d(X, 2, 2)),
    "max_3d": (X3D, T.MAX, (2, 3, 2), dict(stride_nd=(2, 1, 2), padding_nd=(1, 1, 0)),
               F.max_pool3d(X3D, (2, 3, 2), (2, 1, 2), (1, 1, 0))),
    "avg_3d": (X3D, T.AVERAGE, (3, 3, 3), dict(padding_nd=(1, 1, 1), average_count_excludes_padding=False),
               F.avg_pool3d(X3D, 3, 1, 1, count_include_pad=True)),
    "avg_fp16": (X.half(), T.AVERAGE, (3, 3), dict(stride_nd=(2, 2), padding_nd=(1, 1)),
                 F.avg_pool2d(X, 3, 2, 1, count_include_pad=False).half()),
    "max_3d_fp16": (X3D.half(), T.MAX, (2, 2, 2), dict(stride_nd=(2, 2, 2)), F.max_pool3d(X3D, 2).half()),
}


@pytest.mark.parametrize("x, kind, window, attributes, expected", CASES.values(), ids=CASES.keys())
def test_pooling_matches_torch(run_network, x, kind, window, attributes, expected):
    out = run_network(lambda net, a: _pool(net, a, kind, window, **attributes).get_output(0), [x])
    tolerance = dict(atol=2e-3, rtol=2e-3) if x.dtype == torch.float16 else {}
    torch.testing.assert_close(out, expected, **tolerance)


def test_round_up_keeps_window_pytorch_ceil_mode_drops(run_network):
    # I=5, padding 1+1, window 2, stride 2: TensorRT's ceil((7-2)/2)+1 = 4 windows; PyTorch drops the last one,
    # which starts in the post-padding, and returns 3.
    x = torch.randn(1, 1, 5, 5)
    out = run_network(lambda net, a: _pool(net, a, T.MAX, (2, 2), stride_nd=(2, 2), padding_nd=(1, 1),
                                           padding_mode=UP).get_output(0), [x])
    expected = F.max_pool2d(x, 2, 2, 1, ceil_mode=True)
    assert out.shape == (1, 1, 4, 4) and expected.shape == (1, 1, 3, 3)
    torch.testing.assert_close(out[..., :3, :3], expected)


def test_attributes():
    net = trt.Builder(trt.Logger()).create_network(0)
    layer = net.add_pooling_nd(net.add_input("x", trt.float32, (1, 2, 5, 5)), T.AVERAGE, (3, 3))
    assert (layer.type, layer.stride_nd, layer.padding_nd, layer.padding_mode) == (T.AVERAGE, (1, 1), (0, 0), DOWN)
    assert (layer.average_count_excludes_padding, layer.blend_factor) == (True, 0.0)
    layer.type = T.MAX
    assert layer.type == T.MAX and trt.ILayer.type.fget(layer) == trt.LayerType.POOLING


def _then(net, layer, **attributes):
    """Set attributes after add_*; the next add_* re-infers the layer and reports its rule violation."""
    for name, value in attributes.items():
        setattr(layer, name, value)
    return net.add_identity(layer.get_output(0))


pool = lambda net, a: net.add_pooling_nd(a, T.MAX, (2, 2))
REFUSED = {
    "rank": ((1, 2, 8), trt.float32, pool, "rank-4 input"),
    "1d": ((1, 2, 8), trt.float32, lambda net, a: net.add_pooling_nd(a, T.MAX, (2,)), "2-D or 3-D"),
    "int32_input": ((1, 2, 8, 8), trt.int32, pool, "FLOAT, HALF or BF16"),
    "blend_factor": ((1, 2, 8, 8), trt.float32, lambda net, a: _then(net, pool(net, a), blend_factor=1.5), "[0, 1]"),
    "stride_zero": ((1, 2, 8, 8), trt.float32, lambda net, a: _then(net, pool(net, a), stride_nd=(1, 0)), ">= 1"),
    "stride_entries": ((1, 2, 8, 8), trt.float32, lambda net, a: _then(net, pool(net, a), stride_nd=(1, 1, 1)),
                       "must have 2 entries"),
    "negative_padding": ((1, 2, 8, 8), trt.float32, lambda net, a: _then(net, pool(net, a), pre_padding=(-1, 0)),
                         ">= 0"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, define, message):
    assert message in refused(define, [(shape, dtype)])


def test_window_larger_than_padded_input_is_refused_at_build(refused_at_build):
    assert "larger than the padded input (1, 8)" in refused_at_build(pool, [((1, 2, 1, 8), trt.float32)])
