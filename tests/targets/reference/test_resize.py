import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torch_trt.targets.reference as trt

MODE, COORD, ROUND = trt.InterpolationMode, trt.ResizeCoordinateTransformation, trt.ResizeRoundMode
X = torch.randn(2, 3, 5, 6)
V = torch.randn(1, 2, 3, 4, 5)  # volumes


def resize(size=None, scales=None, mode=MODE.NEAREST, coordinates=COORD.ASYMMETRIC, rounding=ROUND.FLOOR,
           selector=trt.ResizeSelector.FORMULA, exclude_outside=False):
    """A define() adding one resize layer configured by the arguments."""
    def define(net, a):
        layer = net.add_resize(a)
        if layer is None:  # refused by add_resize
            return None
        if size is not None:
            layer.shape = size
        if scales is not None:
            layer.scales = scales
        layer.resize_mode, layer.coordinate_transformation, layer.nearest_rounding = mode, coordinates, rounding
        layer.selector_for_single_pixel, layer.exclude_outside = selector, exclude_outside
        return layer.get_output(0)
    return define


def keys_cubic_exclude_outside(x, size, a=-0.75):
    """Half-pixel cubic resize of the last dim, out-of-range taps dropped and the weights renormalized, by loops."""
    n, out = x.shape[-1], torch.empty(*x.shape[:-1], size)
    for i in range(size):
        coordinate = (i + 0.5) * n / size - 0.5
        base = int(torch.floor(torch.tensor(coordinate)))
        taps = {}
        for position in range(base - 1, base + 3):
            d = abs(coordinate - position)
            near, far = ((a + 2) * d - (a + 3)) * d * d + 1, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
            taps[position] = near if d <= 1 else far
        inside = {p: w for p, w in taps.items() if 0 <= p < n}
        total = sum(inside.values())
        out[..., i] = sum(x[..., p] * (w / total) for p, w in inside.items())
    return out


CASES = {  # define, input, expected
    "nearest_up_shape": (resize((2, 3, 10, 12)), X, F.interpolate(X, size=(10, 12), mode="nearest")),
    "nearest_down_uneven": (resize((2, 3, 3, 4)), X, F.interpolate(X, size=(3, 4), mode="nearest")),
    "nearest_scales": (resize(scales=(1, 1, 2, 3)), X, F.interpolate(X, scale_factor=(2, 3), mode="nearest")),
    "nearest_exact": (resize((2, 3, 7, 4), coordinates=COORD.HALF_PIXEL, rounding=ROUND.HALF_UP), X,
                      F.interpolate(X, size=(7, 4), mode="nearest-exact")),
    "nearest_1d": (resize((3, 5, 13)), X[0], F.interpolate(X[0], size=13, mode="nearest")),
    "nearest_3d": (resize((1, 2, 4, 10, 3)), V, F.interpolate(V, size=(4, 10, 3))),
    "linear_1d_half_pixel": (resize((3, 5, 11), mode=MODE.LINEAR, coordinates=COORD.HALF_PIXEL), X[0],
                             F.interpolate(X[0], size=11, mode="linear")),
    "bilinear_half_pixel_down": (resize((2, 3, 3, 4), mode=MODE.LINEAR, coordinates=COORD.HALF_PIXEL), X,
                                 F.interpolate(X, size=(3, 4), mode="bilinear")),
    "bilinear_align_corners": (resize((2, 3, 9, 7), mode=MODE.LINEAR, coordinates=COORD.ALIGN_CORNERS), X,
                               F.interpolate(X, size=(9, 7), mode="bilinear", align_corners=True)),
    "bilinear_single_pixel_upper": (resize((2, 3, 1, 7), mode=MODE.LINEAR, coordinates=COORD.ALIGN_CORNERS,
                                           selector=trt.ResizeSelector.UPPER), X,
                                    F.interpolate(X, size=(1, 7), mode="bilinear", align_corners=True)),
    "trilinear": (resize((1, 2, 7, 3, 8), mode=MODE.LINEAR, coordinates=COORD.HALF_PIXEL), V,
                  F.interpolate(V, size=(7, 3, 8), mode="trilinear")),
    "bicubic_half_pixel": (resize((2, 3, 11, 9), mode=MODE.CUBIC, coordinates=COORD.HALF_PIXEL), X,
                           F.interpolate(X, size=(11, 9), mode="bicubic")),
    "bicubic_align_corners_down": (resize((2, 3, 4, 3), mode=MODE.CUBIC, coordinates=COORD.ALIGN_CORNERS), X,
                                   F.interpolate(X, size=(4, 3), mode="bicubic", align_corners=True)),
    "bicubic_exclude_outside": (resize((2, 3, 5, 9), mode=MODE.CUBIC, coordinates=COORD.HALF_PIXEL,
                                       exclude_outside=True), X, keys_cubic_exclude_outside(X, 9)),
    "nearest_fp16": (resize((2, 3, 10, 12)), X.half(), F.interpolate(X.half(), size=(10, 12), mode="nearest")),
}


@pytest.mark.parametrize("define, x, expected", CASES.values(), ids=CASES.keys())
def test_resize_matches_torch(run_network, define, x, expected):
    torch.testing.assert_close(run_network(define, [x]), expected, rtol=1e-5, atol=1e-5)


def test_setting_scales_clears_shape(run_network):
    def define(net, a):
        layer = net.add_resize(a)
        layer.shape = (2, 3, 7, 7)
        layer.scales = [1, 1, 2, 2]
        assert layer.shape is None and layer.scales == [1.0, 1.0, 2.0, 2.0] and layer.type == trt.LayerType.RESIZE
        return layer.get_output(0)

    assert run_network(define, [X]).shape == (2, 3, 10, 12)


def _doubled_by_a_shape_tensor(net, a):
    """a resized to twice its last two dims, the output shape a shape tensor computed from a's."""
    twice = np.array([1, 1, 2, 2], dtype=np.int64)
    doubled = net.add_elementwise(net.add_shape(a).get_output(0), net.add_constant((4,), trt.Weights(twice))
                                  .get_output(0), trt.ElementWiseOperation.PROD)
    layer = net.add_resize(a)
    layer.set_input(1, doubled.get_output(0))
    layer.resize_mode, layer.coordinate_transformation = MODE.LINEAR, COORD.HALF_PIXEL
    assert layer.shape is None
    return layer.get_output(0)


def test_the_output_shape_may_be_a_shape_tensor(run_network):
    torch.testing.assert_close(run_network(_doubled_by_a_shape_tensor, [X]),
                               F.interpolate(X, scale_factor=2, mode="bilinear"), rtol=1e-5, atol=1e-5)


def test_setting_shape_drops_the_shape_tensor(run_network):
    def define(net, a):
        layer = net.add_resize(a)
        layer.set_input(1, net.add_shape(a).get_output(0))
        layer.shape = (2, 3, 7, 7)
        assert layer.get_input(1) is None
        return layer.get_output(0)

    assert run_network(define, [X]).shape == (2, 3, 7, 7)


def _with_a_float_shape(net, a):
    layer = net.add_resize(a)
    layer.set_input(1, net.add_cast(net.add_shape(a).get_output(0), trt.float32).get_output(0))
    return layer


REFUSED = {  # define, input shape, dtype, message
    "int32": (resize((2, 3, 10, 12)), (2, 3, 5, 6), trt.int32, "needs a float input"),
    "shape_rank": (resize((10, 12)), (2, 3, 5, 6), trt.float32, "one entry per dim"),
    "cubic_third_dim": (resize((2, 4, 10, 12), mode=MODE.CUBIC), (2, 3, 5, 6), trt.float32,
                        "only resizes the innermost 2 dims"),
    "linear_fourth_dim": (resize(scales=(2, 1, 1, 1), mode=MODE.LINEAR), (2, 3, 5, 6), trt.float32,
                          "only resizes the innermost 3 dims"),
    "zero_size": (resize(scales=(1, 1, 0.1, 1)), (2, 3, 5, 6), trt.float32, "dims < 1"),
    "float_shape_tensor": (_with_a_float_shape, (2, 3, 5, 6), trt.float32, "INT32 or INT64 shape tensor"),
}


@pytest.mark.parametrize("define, shape, dtype, message", REFUSED.values(), ids=REFUSED.keys())
def test_resize_refused(refused_at_build, define, shape, dtype, message):
    assert message in refused_at_build(define, [(shape, dtype)])
