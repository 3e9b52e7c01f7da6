import pytest
import torch
import torch.nn.functional as F

import torch_trt.targets.reference as trt

F32, F16, I32 = trt.float32, trt.float16, trt.int32
EPS = 1e-5


def _norm(v2, axes, num_groups=1, epsilon=None):
    """define(net, x, scale, bias) adding a normalization, then setting the attributes given."""
    def define(net, x, scale, bias):
        add = net.add_normalization_v2 if v2 else net.add_normalization
        layer = add(x, scale, bias, axes)
        layer.num_groups = num_groups
        if epsilon is not None:
            layer.epsilon = epsilon
        return layer.get_output(0)
    return define


def _reduced(x, dims, eps):
    var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


# (input shape, scale/bias shape, axesMask, num_groups, v2, reference(x, scale, bias, eps))
CASES = {
    "layer_norm_last_v1": ((2, 3, 8), (1, 1, 8), 0b100, 1, False,
                           lambda x, s, b, e: F.layer_norm(x, (8,), s.flatten(), b.flatten(), e)),
    "layer_norm_last_v2": ((2, 3, 8), (1, 1, 8), 0b100, 1, True,
                           lambda x, s, b, e: F.layer_norm(x, (8,), s.flatten(), b.flatten(), e)),
    "layer_norm_last_two": ((2, 3, 4, 5), (1, 1, 4, 5), 0b1100, 1, True,
                            lambda x, s, b, e: F.layer_norm(x, (4, 5), s[0, 0], b[0, 0], e)),
    "layer_norm_broadcast_scale": ((2, 3, 4, 5), (1, 1, 1, 5), 0b1100, 1, False,
                                   lambda x, s, b, e: F.layer_norm(x, (4, 5), eps=e) * s + b),
    "layer_norm_rank1": ((16,), (16,), 0b1, 1, True, lambda x, s, b, e: F.layer_norm(x, (16,), s, b, e)),
    "batch_axis": ((5, 3), (1, 3), 0b1, 1, True, lambda x, s, b, e: _reduced(x, (0,), e) * s + b),
    "instance_norm": ((2, 3, 4, 5), (1, 3, 1, 1), 0b1100, 1, False,
                      lambda x, s, b, e: F.instance_norm(x, weight=s.flatten(), bias=b.flatten(), eps=e)),
    "group_norm_v2": ((2, 6, 4, 4), (1, 6, 1, 1), 0b1100, 3, True,
                      lambda x, s, b, e: F.group_norm(x, 3, s.flatten(), b.flatten(), e)),
    "group_norm_v1_per_group": ((2, 6, 4, 4), (1, 3, 1, 1), 0b1100, 3, False,
                                lambda x, s, b, e: F.group_norm(x, 3, s.flatten().repeat_interleave(2),
                                                                b.flatten().repeat_interleave(2), e)),
    "group_norm_v1_shared": ((2, 6, 4, 4), (1, 1, 1, 1), 0b1100, 2, False,
                             lambda x, s, b, e: F.group_norm(x, 2, eps=e) * s + b),
    "group_norm_rank3": ((2, 4, 6), (1, 4, 1), 0b100, 2, True,
                         lambda x, s, b, e: F.group_norm(x, 2, s.flatten(), b.flatten(), e)),
    "group_norm_rank5_v1": ((1, 4, 2, 3, 3), (1, 2, 1, 1, 1), 0b11100, 2, False,
                            lambda x, s, b, e: F.group_norm(x, 2, s.flatten().repeat_interleave(2),
                                                            b.flatten().repeat_interleave(2), e)),
}


@pytest.mark.parametrize("epsilon", [None, 1e-2])
@pytest.mark.parametrize("shape, affine, axes, groups, v2, reference", CASES.values(), ids=CASES.keys())
def test_matches_pytorch(run_network, shape, affine, axes, groups, v2, reference, epsilon):
    x, s, b = torch.randn(shape) * 3 + 1, torch.randn(affine), torch.randn(affine)
    out = run_network(_norm(v2, axes, groups, epsilon), [x, s, b])
    torch.testing.assert_close(out, reference(x, s, b, EPS if epsilon is None else epsilon), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("v2", [False, True])
def test_half_precision_layer_norm(run_network, dtype, v2):
    x, s, b = torch.randn(4, 32), torch.randn(1, 32), torch.randn(1, 32)
    out = run_network(_norm(v2, 0b10), [t.to(dtype) for t in (x, s, b)])
    assert out.dtype == dtype
    expected = F.layer_norm(x, (32,), s.flatten(), b.flatten(), EPS)
    torch.testing.assert_close(out.float(), expected, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("v2", [False, True])
def test_defaults_and_read_only_is_v2(run_network, v2):
    def define(net, x, scale, bias):
        layer = (net.add_normalization_v2 if v2 else net.add_normalization)(x, scale, bias, 0b10)
        assert (layer.type, layer.epsilon, layer.axes, layer.num_groups, layer.is_v2) == \
            (trt.LayerType.NORMALIZATION, 1e-5, 0b10, 1, v2)
        with pytest.raises(AttributeError):
            layer.is_v2 = not v2
        return layer.get_output(0)

    run_network(define, [torch.randn(2, 4), torch.ones(1, 4), torch.zeros(1, 4)])


def test_v1_per_group_scale_without_num_groups_fails_at_build(run_network):
    # add_normalization accepts a per-group scale (num_groups is set afterwards); the build insists on it.
    define = lambda net, x, s, b: net.add_normalization(x, s, b, 0b1100).get_output(0)
    with pytest.raises(AssertionError, match="num_groups is 1; set num_groups = 3"):
        run_network(define, [torch.randn(2, 6, 4, 4), torch.ones(1, 3, 1, 1), torch.zeros(1, 3, 1, 1)])


def _then(v2, axes, **attributes):
    """Add a normalization, set attributes; the next add_* re-infers it and reports its rule violation."""
    def define(net, x, scale, bias):
        layer = (net.add_normalization_v2 if v2 else net.add_normalization)(x, scale, bias, axes)
        for name, value in attributes.items():
            setattr(layer, name, value)
        return net.add_identity(layer.get_output(0))
    return define


def _add(v2, axes):
    return lambda net, x, scale, bias: (net.add_normalization_v2 if v2 else net.add_normalization)(x, scale, bias, axes)


NCHW, C6 = (2, 6, 4, 4), (1, 6, 1, 1)
REFUSED = {
    "int32": (((2, 4), I32), ((1, 4), I32), _add(True, 0b10), "needs a float input"),
    "scale_dtype": (((2, 4), F32), ((1, 4), F16), _add(True, 0b10), "scale dtype torch.float16 differs"),
    "scale_rank": (((2, 3, 8), F32), ((8,), F32), _add(False, 0b100), "scale (8,) must have the rank of input"),
    "scale_broadcast": (((2, 3, 8), F32), ((1, 1, 4), F32), _add(False, 0b100), "does not broadcast to (2, 3, 8)"),
    "v2_per_group_scale": ((NCHW, F32), ((1, 3, 1, 1), F32), _add(True, 0b1100), "does not broadcast"),
    "v1_per_channel_with_groups": ((NCHW, F32), (C6, F32), _then(False, 0b1100, num_groups=3),
                                   "scale (1, 6, 1, 1) does not broadcast to (2, 3, 4, 4)"),
    "axes_zero": (((2, 4), F32), ((1, 4), F32), _add(True, 0), "non-zero bitmask"),
    "axes_beyond_rank": (((2, 4), F32), ((1, 4), F32), _add(True, 0b100), "beyond rank 2"),
    "groups_zero": ((NCHW, F32), (C6, F32), _then(True, 0b1100, num_groups=0), "num_groups must be >= 1"),
    "groups_divide": ((NCHW, F32), (C6, F32), _then(True, 0b1100, num_groups=4), "does not divide the 6 channels"),
    "groups_axes": ((NCHW, F32), (C6, F32), _then(True, 0b1000, num_groups=3), "needs axes 0b1100"),
    "groups_rank": (((2, 6), F32), ((1, 6), F32), _then(True, 0b10, num_groups=3), "rank >= 3"),
}


@pytest.mark.parametrize("x_spec, affine_spec, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, x_spec, affine_spec, define, message):
    assert message in refused(define, [x_spec, affine_spec, affine_spec])
