import pytest
import torch
import torch.nn.functional as F

import torch_trt.targets.reference as trt

X = torch.randn(2, 3, 5, 6)
# (input, pre_padding, post_padding, expected F.pad (last dim first))
CASES = {
    "pad": (X, (1, 2), (3, 0), (2, 0, 1, 3)),
    "crop": (X, (-1, 0), (0, -2), (0, -2, -1, 0)),
    "pad_and_crop": (X, (2, -3), (-1, 1), (-3, 1, 2, -1)),
    "crop_to_empty": (X, (-5, 0), (0, 0), (0, 0, -5, 0)),
    "rank_5": (X[None], (1, 1), (1, 1), (1, 1, 1, 1)),
    "fp16": (X.half(), (1, 0), (0, 1), (0, 1, 1, 0)),
    "int32": (torch.arange(12, dtype=torch.int32).reshape(1, 1, 3, 4), (1, 1), (-1, 0), (1, 0, 1, -1)),
}


@pytest.mark.parametrize("x, pre, post, pads", CASES.values(), ids=CASES.keys())
def test_padding_matches_torch(run_network, x, pre, post, pads):
    out = run_network(lambda net, a: net.add_padding_nd(a, pre, post).get_output(0), [x])
    torch.testing.assert_close(out, F.pad(x, pads))


def test_attributes_set_after_add(run_network):
    def define(net, a):
        layer = net.add_padding_nd(a, (0, 0), (0, 0))
        layer.pre_padding_nd, layer.post_padding_nd = [1, 0], (0, -1)
        assert (layer.pre_padding_nd, layer.post_padding_nd, layer.type) == ((1, 0), (0, -1), trt.LayerType.PADDING)
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [X]), F.pad(X, (0, -1, 1, 0)))


REFUSED = {
    "three_dims": ((1, 2, 3, 4), lambda net, a: net.add_padding_nd(a, (1, 1, 1), (1, 1, 1)), "only 2-D padding"),
    # TensorRT's Padding operator: rank >= 4, of float32, float16, int32 or int8
    "rank_3": ((3, 5, 6), lambda net, a: net.add_padding_nd(a, (1, 1), (1, 1)), "rank >= 4"),
    "rank_1": ((4,), lambda net, a: net.add_padding_nd(a, (1, 1), (1, 1)), "rank >= 4"),
    "over_crop": ((1, 2, 3, 4), lambda net, a: net.add_padding_nd(a, (-2, 0), (-2, 0)), "crops more"),
}


@pytest.mark.parametrize("shape, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, define, message):
    assert message in refused(define, [(shape, trt.float32)])


@pytest.mark.parametrize("dtype", [trt.int64, trt.bool, trt.bfloat16])
def test_padding_refuses_types_tensorrt_does_not_pad(refused, dtype):
    assert "float32, float16, int32 or int8" in refused(lambda net, a: net.add_padding_nd(a, (1, 1), (1, 1)),
                                                        [((1, 2, 3, 4), dtype)])
