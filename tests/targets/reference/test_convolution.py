import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt

P = trt.PaddingMode
DOWN, UP, UPPER, LOWER = P.EXPLICIT_ROUND_DOWN, P.EXPLICIT_ROUND_UP, P.SAME_UPPER, P.SAME_LOWER


def _layer(net, add, a, maps, kernel, bias, **attributes):
    """add_(de)convolution_nd, then set attributes afterwards, as converters do."""
    layer = add(a, maps, tuple(kernel.shape[2:]), kernel.numpy(), None if bias is None else bias.numpy())
    for name, value in attributes.items():
        setattr(layer, name, value)
    return layer


# (input shape, maps, kernel, groups, stride, dilation, pre, post, mode, expected F.pad of the input (last dim first))
CONV = {
    "plain": ((1, 3, 8, 8), 4, (3, 3), 1, (1, 1), (1, 1), (0, 0), (0, 0), DOWN, (0, 0, 0, 0)),
    "groups_stride": ((2, 4, 9, 7), 6, (3, 2), 2, (2, 1), (1, 1), (1, 0), (1, 0), DOWN, (0, 0, 1, 1)),
    "depthwise": ((1, 4, 6, 6), 4, (3, 3), 4, (1, 1), (1, 1), (1, 1), (1, 1), DOWN, (1, 1, 1, 1)),
    "dilation": ((1, 2, 10, 10), 2, (3, 3), 1, (1, 1), (2, 3), (2, 1), (2, 1), DOWN, (1, 1, 2, 2)),
    "asymmetric": ((1, 2, 7, 7), 3, (3, 3), 1, (1, 1), (1, 1), (1, 0), (0, 2), DOWN, (0, 2, 1, 0)),
    "round_up": ((1, 2, 8, 8), 3, (3, 3), 1, (2, 2), (1, 1), (0, 0), (0, 0), UP, (0, 1, 0, 1)),
    "same_upper": ((1, 2, 8, 8), 3, (3, 4), 1, (2, 2), (1, 1), (0, 0), (0, 0), UPPER, (1, 1, 0, 1)),
    "same_lower": ((1, 2, 8, 8), 3, (3, 4), 1, (2, 2), (1, 1), (0, 0), (0, 0), LOWER, (1, 1, 1, 0)),
    "same_dilated": ((1, 2, 7, 7), 2, (3, 3), 1, (1, 1), (2, 2), (0, 0), (0, 0), UPPER, (2, 2, 2, 2)),
    "same_ignores_explicit": ((1, 2, 6, 6), 2, (3, 3), 1, (1, 1), (1, 1), (2, 2), (2, 2), UPPER, (1, 1, 1, 1)),
    "3d": ((1, 2, 5, 6, 7), 4, (3, 3, 3), 1, (1, 2, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1), DOWN, (1, 1) * 3),
    "3d_groups_dilated": ((1, 4, 7, 7, 7), 2, (2, 3, 3), 2, (1, 1, 2), (2, 1, 1), (0,) * 3, (0,) * 3, DOWN, (0,) * 6),
    "patches": ((2, 3, 8, 12), 5, (4, 4), 1, (4, 4), (1, 1), (0, 0), (0, 0), DOWN, (0, 0, 0, 0)),
    "patches_with_remainder": ((1, 3, 9, 10), 5, (2, 3), 1, (2, 3), (1, 1), (0, 0), (0, 0), DOWN, (0, 0, 0, 0)),
    "patches_padded": ((1, 2, 6, 6), 3, (4, 4), 1, (4, 4), (1, 1), (1, 1), (1, 1), DOWN, (1, 1, 1, 1)),
    "patches_grouped": ((1, 4, 8, 8), 2, (2, 2), 2, (2, 2), (1, 1), (0, 0), (0, 0), DOWN, (0, 0, 0, 0)),
}


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("shape, maps, kernel, groups, stride, dilation, pre, post, mode, pads", CONV.values(),
                         ids=CONV.keys())
def test_convolution_matches_torch(run_network, bias, shape, maps, kernel, groups, stride, dilation, pre, post,
                                   mode, pads):
    x, w = torch.randn(shape), torch.randn(maps, shape[1] // groups, *kernel)
    b = torch.randn(maps) if bias else None
    out = run_network(lambda net, a: _layer(net, net.add_convolution_nd, a, maps, w, b, num_groups=groups,
                                            stride_nd=stride, dilation_nd=dilation, pre_padding=pre,
                                            post_padding=post, padding_mode=mode).get_output(0), [x])
    conv = F.conv2d if len(kernel) == 2 else F.conv3d
    torch.testing.assert_close(out, conv(F.pad(x, pads), w, b, stride, 0, dilation, groups))


def test_windows_tiling_the_input_are_one_matrix_product():
    """A patch embedding (stride = kernel size) is a GEMM over the patches, not a convolution kernel."""
    layer = trt.IConvolutionLayer.__new__(trt.IConvolutionLayer)
    for name, value in dict(kernel_size_nd=(4, 4), stride_nd=(4, 4), dilation_nd=(1, 1), num_groups=1,
                            num_output_maps=5, padding_mode=DOWN, pre_padding=(0, 0), post_padding=(0, 0)).items():
        object.__setattr__(layer, name, trt.Dims(value) if name.endswith("nd") or name.endswith("padding") else value)
    weights = {"kernel": torch.randn(5 * 3 * 16), "bias": torch.randn(5)}
    graph = make_fx(lambda x: layer._compute([x], weights))(torch.randn(2, 3, 8, 12))
    targets = {node.target for node in graph.graph.nodes}
    assert torch.ops.aten.addmm.default in targets and torch.ops.aten.convolution.default not in targets


def _restored(cls, **attributes):
    """A layer as an engine restores it from its plan: attributes only, no network."""
    layer = cls.__new__(cls)
    for name, value in attributes.items():
        object.__setattr__(layer, name, trt.Dims(value) if isinstance(value, tuple) else value)
    return layer


def test_cpu_convolutions_and_max_pooling_run_channels_last():
    """oneDNN's max pooling is an order of magnitude faster channels-last; a convolution's output keeps the layout,
    so the layers after the first run on it without a copy."""
    window = dict(stride_nd=(1, 1), padding_mode=DOWN, pre_padding=(1, 1), post_padding=(1, 1))
    conv = _restored(trt.IConvolutionLayer, kernel_size_nd=(3, 3), dilation_nd=(1, 1), num_groups=1,
                     num_output_maps=4, **window)
    pool = _restored(trt.IPoolingLayer, _pooling=trt.PoolingType.MAX, window_size_nd=(3, 3), **window)
    x, kernel = torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)
    convolved = conv._compute([x], {"kernel": kernel.reshape(-1)})
    pooled = pool._compute([convolved], {})
    assert convolved.is_contiguous(memory_format=torch.channels_last)
    assert pooled.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(pooled, F.max_pool2d(F.conv2d(x, kernel, padding=1), 3, 1, 1))


# (input shape, maps, kernel, groups, stride, dilation, pre, post, mode, expected crop (pre, post) of the full output)
DECONV = {
    "plain": ((1, 3, 5, 5), 2, (3, 3), 1, (1, 1), (1, 1), (0, 0), (0, 0), DOWN, ((0, 0), (0, 0))),
    "stride_padding": ((2, 4, 5, 6), 3, (4, 4), 1, (2, 2), (1, 1), (1, 1), (1, 1), DOWN, ((1, 1), (1, 1))),
    "groups_dilation": ((1, 4, 5, 5), 6, (3, 3), 2, (2, 1), (2, 2), (1, 0), (1, 0), DOWN, ((1, 0), (1, 0))),
    "asymmetric": ((1, 2, 4, 4), 2, (3, 3), 1, (2, 2), (1, 1), (0, 1), (2, 0), DOWN, ((0, 1), (2, 0))),
    "round_up_is_explicit": ((1, 2, 4, 4), 2, (3, 3), 1, (2, 2), (1, 1), (1, 1), (1, 1), UP, ((1, 1), (1, 1))),
    "same_upper": ((1, 2, 4, 5), 2, (3, 4), 1, (2, 2), (1, 1), (0, 0), (0, 0), UPPER, ((0, 1), (1, 1))),
    "same_lower": ((1, 2, 4, 5), 2, (3, 4), 1, (2, 2), (1, 1), (0, 0), (0, 0), LOWER, ((1, 1), (0, 1))),
    "same_small_kernel": ((1, 2, 4, 4), 2, (2, 2), 1, (3, 3), (1, 1), (0, 0), (0, 0), UPPER, ((0, 0), (0, 0))),
    "3d": ((1, 2, 3, 4, 3), 4, (2, 3, 3), 2, (2, 1, 2), (1, 1, 1), (0, 1, 1), (0, 1, 1), DOWN,
           ((0, 1, 1), (0, 1, 1))),
}


@pytest.mark.parametrize("shape, maps, kernel, groups, stride, dilation, pre, post, mode, crop", DECONV.values(),
                         ids=DECONV.keys())
def test_deconvolution_matches_torch(run_network, shape, maps, kernel, groups, stride, dilation, pre, post, mode,
                                     crop):
    x, w, b = torch.randn(shape), torch.randn(shape[1], maps // groups, *kernel), torch.randn(maps)
    out = run_network(lambda net, a: _layer(net, net.add_deconvolution_nd, a, maps, w, b, num_groups=groups,
                                            stride_nd=stride, dilation_nd=dilation, pre_padding=pre,
                                            post_padding=post, padding_mode=mode).get_output(0), [x])
    # PyTorch's `padding` crops symmetrically; the asymmetric rest is sliced off.
    low = [min(b_, a_) for b_, a_ in zip(*crop)]
    deconv = F.conv_transpose2d if len(kernel) == 2 else F.conv_transpose3d
    expected = deconv(x, w, b, stride, low, 0, groups, dilation)
    for axis, (b_, a_, m) in enumerate(zip(*crop, low), start=2):
        expected = expected.narrow(axis, b_ - m, expected.shape[axis] - (b_ - m) - (a_ - m))
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("add", ["add_convolution_nd", "add_deconvolution_nd"])
def test_fp16_matches_fp32(run_network, add):
    x, w, b = torch.randn(1, 4, 6, 6), torch.randn(4, 4, 3, 3), torch.randn(4)
    define = lambda net, a: _layer(net, getattr(net, add), a, 4, w.half(), b.half(), stride_nd=(2, 2),
                                   padding_nd=(1, 1)).get_output(0)
    out = run_network(define, [x.half()])
    reference = run_network(lambda net, a: _layer(net, getattr(net, add), a, 4, w, b, stride_nd=(2, 2),
                                                  padding_nd=(1, 1)).get_output(0), [x])
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), reference, atol=5e-2, rtol=1e-2)


def test_attributes():
    net = trt.Builder(trt.Logger()).create_network(0)
    a = net.add_input("x", trt.float32, (1, 2, 5, 5))
    layer = net.add_convolution_nd(a, 3, (3, 3), np.ones((3, 2, 3, 3), np.float32))
    assert (layer.type, layer.num_groups, layer.padding_mode, layer.bias) == (trt.LayerType.CONVOLUTION, 1, DOWN, None)
    assert (layer.stride_nd, layer.dilation_nd, layer.kernel_size_nd) == ((1, 1), (1, 1), (3, 3))
    layer.padding_nd = [2, 1]
    layer.pre_padding = (0, 1)
    assert (layer.padding_nd, layer.post_padding, layer.kernel.size) == ((0, 1), (2, 1), 54)


def _then(net, layer, **attributes):
    """Set attributes after add_*; the next add_* re-infers the layer and reports its rule violation."""
    for name, value in attributes.items():
        setattr(layer, name, value)
    return net.add_identity(layer.get_output(0))


F32, F16, I32 = trt.float32, trt.float16, trt.int32
W, W1 = np.ones((4, 2, 3, 3), np.float32), np.ones((2, 1, 1, 1), np.float32)
conv = lambda net, a, kernel=W, bias=None, maps=4: net.add_convolution_nd(a, maps, kernel.shape[2:], kernel, bias)
deconv = lambda net, a, kernel, maps: net.add_deconvolution_nd(a, maps, kernel.shape[2:], kernel)
REFUSED = {
    "rank": ((1, 2, 8), F32, conv, "rank-4 input"),
    "1d": ((1, 2, 8), F32, lambda net, a: net.add_convolution_nd(a, 4, (3,), np.ones(24, np.float32)), "2-D or 3-D"),
    "int32_input": ((1, 2, 8, 8), I32, conv, "FLOAT, HALF or BF16"),
    "empty_kernel": ((1, 2, 8, 8), F32, lambda net, a: net.add_convolution_nd(a, 4, (3, 3), trt.Weights()), "empty"),
    "channels_groups": ((1, 2, 8, 8), F32, lambda net, a: _then(net, conv(net, a), num_groups=3),
                        "input channels 2 are not divisible"),
    "maps_groups": ((1, 2, 8, 8), F32, lambda net, a: _then(net, conv(net, a, W[:3], maps=3), num_groups=2),
                    "num_output_maps 3 is not divisible"),
    "bias_count": ((1, 2, 8, 8), F32, lambda net, a: conv(net, a, bias=np.ones(3, np.float32)), "bias holds 3"),
    "kernel_dtype": ((1, 2, 8, 8), F16, conv, "kernel weights are FLOAT but the input is HALF"),
    "bias_dtype": ((1, 2, 8, 8), F16, lambda net, a: conv(net, a, W.astype(np.float16), np.ones(4, np.float32)),
                   "bias weights are FLOAT"),
    "stride_entries": ((1, 2, 8, 8), F32, lambda net, a: _then(net, conv(net, a), stride_nd=(1, 1, 1)),
                       "stride_nd (1, 1, 1) must have 2 entries"),
    "stride_zero": ((1, 2, 8, 8), F32, lambda net, a: _then(net, conv(net, a), stride_nd=(0, 1)), "must be >= 1"),
    "dilation_zero": ((1, 2, 8, 8), F32, lambda net, a: _then(net, conv(net, a), dilation_nd=(1, 0)), "must be >= 1"),
    "negative_padding": ((1, 2, 8, 8), F32, lambda net, a: _then(net, conv(net, a), post_padding=(0, -1)), ">= 0"),
    "deconv_crops_all": ((1, 2, 1, 1), F32, lambda net, a: _then(net, deconv(net, a, W1, 1), padding_nd=(1, 1)),
                         "crops away"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, define, message):
    assert message in refused(define, [(shape, dtype)])


def _built(net, layer, **attributes):
    """Set attributes after add_*, mark the output and build: None when the builder refuses the network."""
    for name, value in attributes.items():
        setattr(layer, name, value)
    net.mark_output(layer.get_output(0))
    return net.builder.build_serialized_network(net, net.builder.create_builder_config())


W_GROUPED = np.ones((4, 1, 3, 3), np.float32)  # a kernel for num_groups 2 over 2 input channels
REFUSED_AT_BUILD = {  # add_* accepts a kernel made for a grouping still to be set; the build needs num_groups set
    "groups_never_set": lambda net, a: _built(net, conv(net, a, W_GROUPED)),
    "deconv_groups_never_set": lambda net, a: _built(net, deconv(net, a, np.ones((2, 2, 3, 3), np.float32), 4)),
}


@pytest.mark.parametrize("define", REFUSED_AT_BUILD.values(), ids=REFUSED_AT_BUILD.keys())
def test_grouping_refused_at_build(refused, define):
    assert "set num_groups" in refused(define, [((1, 2, 5, 5), F32)])


@pytest.mark.parametrize("add, kernel, maps", [("add_convolution_nd", W_GROUPED, 4),
                                               ("add_deconvolution_nd", np.ones((2, 2, 3, 3), np.float32), 4)],
                         ids=["conv", "deconv"])
def test_grouping_set_after_add_builds(run_network, add, kernel, maps):
    x = torch.randn(1, 2, 5, 5)
    define = lambda net, a: _then(net, getattr(net, add)(a, maps, (3, 3), kernel), num_groups=2).get_output(0)
    out = run_network(define, [x])
    w = torch.from_numpy(kernel)
    expected = F.conv2d(x, w, groups=2) if add == "add_convolution_nd" else F.conv_transpose2d(x, w, groups=2)
    torch.testing.assert_close(out, expected)


def test_window_larger_than_input_waits_for_padding(run_network):
    """Padding is set after add_*: a 3x3 kernel on a 2x2 input is fine once padding 1 is set."""
    x, kernel = torch.randn(1, 1, 2, 2), torch.randn(1, 1, 3, 3)

    def define(net, a):
        layer = net.add_convolution_nd(a, 1, (3, 3), kernel.numpy())
        layer.padding_nd = (1, 1)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), torch.nn.functional.conv2d(x, kernel, padding=1))


def test_window_larger_than_padded_input_is_refused_at_build(run_network):
    x, kernel = torch.randn(1, 1, 2, 2), torch.randn(1, 1, 3, 3)
    with pytest.raises(AssertionError, match="larger than the padded input"):
        run_network(lambda net, a: net.add_convolution_nd(a, 1, (3, 3), kernel.numpy()).get_output(0), [x])


# num_groups is set after add_*, so a kernel whose weight count fits no grouping is refused by the build.
def _bias_as_tensor(net, a):
    """A bias given through set_input(2), which the reference does not read: refused, not ignored."""
    layer = conv(net, a)
    layer.set_input(2, net.add_constant((4,), np.full(4, 100, dtype=np.float32)).get_output(0))
    return layer


REFUSED_AT_BUILD = {
    "kernel_count": ((1, 2, 8, 8), F32, lambda net, a: conv(net, a, maps=5), "kernel holds 72 weights"),
    "deconv_kernel_count": ((1, 2, 4, 4), F32, lambda net, a: deconv(net, a, W, 3), "CKRS shape (2, 3, 3, 3)"),
    "bias_as_tensor": ((1, 2, 8, 8), F32, _bias_as_tensor, "set_input(1) and set_input(2) are not supported"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED_AT_BUILD.values(), ids=REFUSED_AT_BUILD.keys())
def test_refused_at_build(refused_at_build, shape, dtype, define, message):
    assert message in refused_at_build(define, [(shape, dtype)])
