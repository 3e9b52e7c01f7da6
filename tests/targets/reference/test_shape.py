import pytest
import torch

import torch_trt.targets.reference as trt

CASES = {
    "rank3": torch.randn(2, 3, 4),
    "rank1": torch.randn(5),
    "rank0": torch.tensor(1.5),
    "empty_dim": torch.randn(2, 0),
    "bool": torch.ones(1, 7, dtype=torch.bool),
    "int32": torch.ones(3, 1, dtype=torch.int32),
    "fp16": torch.randn(4, 4).half(),
}


@pytest.mark.parametrize("x", CASES.values(), ids=CASES.keys())
def test_shape_returns_int64_dims(run_network, x):
    out = run_network(lambda net, a: net.add_shape(a).get_output(0), [x])
    torch.testing.assert_close(out, torch.tensor(x.shape, dtype=torch.int64))


def test_shape_output_is_rank_long_int64_even_for_dynamic_dims():
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_shape(network.add_input("x", trt.float32, (-1, 3, -1)))
    assert layer.type == trt.LayerType.SHAPE
    assert (layer.get_output(0).shape, layer.get_output(0).dtype) == ((3,), trt.int64)
