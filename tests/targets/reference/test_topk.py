import pytest
import torch

import torch_trt.targets.reference as trt

F32 = trt.float32


def _topk(op, k, axes, indices_type=None):
    def define(net, a):
        extra = () if indices_type is None else (indices_type,)
        layer = net.add_topk(a, op, k, axes, *extra)
        return None if layer is None else [layer.get_output(0), layer.get_output(1)]
    return define


@pytest.mark.parametrize("shape, dim, k", [((7,), 0, 3), ((3, 5), 1, 5), ((3, 5), 0, 1), ((2, 3, 4, 6), 3, 2),
                                           ((2, 3, 4, 6), 0, 2)])
@pytest.mark.parametrize("op, largest", [(trt.TopKOperation.MAX, True), (trt.TopKOperation.MIN, False)])
def test_values_and_indices_match_pytorch(run_network, shape, dim, k, op, largest):
    x = torch.randn(shape)
    values, indices = run_network(_topk(op, k, 1 << dim), [x])
    expected = torch.topk(x, k, dim, largest=largest, sorted=True)
    torch.testing.assert_close(values, expected.values)
    assert indices.dtype == torch.int32
    torch.testing.assert_close(indices, expected.indices.int())


def test_indices_type_int64_and_int_input(run_network):
    x = torch.randperm(12, dtype=torch.int32).reshape(3, 4)
    values, indices = run_network(_topk(trt.TopKOperation.MAX, 2, 1 << 1, trt.int64), [x])
    expected = torch.topk(x, 2, 1)
    assert (values.dtype, indices.dtype) == (torch.int32, torch.int64)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)


REFUSED = {
    "bool": ((2, 3), trt.bool, _topk(trt.TopKOperation.MAX, 1, 1), "does not accept torch.bool"),
    "two_bits": ((2, 3), F32, _topk(trt.TopKOperation.MAX, 1, 0b11), "exactly one bit"),
    "beyond_rank": ((2, 3), F32, _topk(trt.TopKOperation.MAX, 1, 0b100), "beyond rank 2"),
    "not_last_four": ((2, 2, 2, 2, 3), F32, _topk(trt.TopKOperation.MAX, 1, 1), "last 4 dims"),
    "k_zero": ((2, 3), F32, _topk(trt.TopKOperation.MAX, 0, 0b10), "k must lie in"),
    "k_over_max": ((2, 4000), F32, _topk(trt.TopKOperation.MAX, 3841, 0b10), "k must lie in"),
    "k_over_dim": ((2, 3), F32, _topk(trt.TopKOperation.MAX, 4, 0b10), "exceeds the size 3"),
    "indices_float": ((2, 3), F32, _topk(trt.TopKOperation.MAX, 1, 0b10, trt.float32), "indices_type"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, define, message):
    assert message in refused(define, [(shape, dtype)])
