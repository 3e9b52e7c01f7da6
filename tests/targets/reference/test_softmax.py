import pytest
import torch

import torch_trt.targets.reference as trt

F32 = trt.float32
SHAPES = [(7,), (3, 5), (2, 3, 4), (2, 3, 4, 5), (2, 1, 3, 2, 4)]


def _softmax(axes):
    def define(net, a):
        layer = net.add_softmax(a)
        layer.axes = axes
        return layer.get_output(0)
    return define


@pytest.mark.parametrize("shape, dim", [(s, d) for s in SHAPES for d in range(len(s))])
def test_each_axis_matches_pytorch(run_network, shape, dim):
    x = torch.randn(shape)
    torch.testing.assert_close(run_network(_softmax(1 << dim), [x]), torch.softmax(x, dim))


@pytest.mark.parametrize("shape, default_dim", [((5,), 0), ((3, 5), 0), ((2, 3, 4), 0), ((2, 3, 4, 5), 1),
                                                ((2, 2, 3, 4, 5), 2)])
def test_default_axis_is_rank_minus_three(run_network, shape, default_dim):
    x = torch.randn(shape)

    def define(net, a):
        layer = net.add_softmax(a)
        assert (layer.type, layer.axes) == (trt.LayerType.SOFTMAX, 1 << default_dim)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), torch.softmax(x, default_dim))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_keeps_dtype(run_network, dtype):
    x = torch.randn(2, 3, 8).to(dtype)
    out = run_network(_softmax(1 << 2), [x])
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), torch.softmax(x.float(), 2), atol=1e-2, rtol=2e-2)


def _then_axes(net, a, axes):
    """Set axes after add_softmax; the next add_* re-infers the layer and reports its rule violation."""
    layer = net.add_softmax(a)
    layer.axes = axes
    return net.add_identity(layer.get_output(0))


REFUSED = {
    "int32": ((2, 3), trt.int32, lambda net, a: net.add_softmax(a), "float input"),
    "rank0_default": ((), F32, lambda net, a: net.add_softmax(a), "beyond rank 0"),
    "two_bits": ((2, 3), F32, lambda net, a: _then_axes(net, a, 0b11), "exactly one bit"),
    "zero": ((2, 3), F32, lambda net, a: _then_axes(net, a, 0), "non-zero bitmask"),
    "beyond_rank": ((2, 3), F32, lambda net, a: _then_axes(net, a, 0b100), "beyond rank 2"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, define, message):
    assert message in refused(define, [(shape, dtype)])
