import pytest
import torch

import torch_trt.targets.reference as trt


def _scatter(axis):
    def define(net, data, indices, updates):
        layer = net.add_scatter(data, indices, updates, trt.ScatterMode.ELEMENT)
        layer.axis = axis
        return layer.get_output(0)
    return define


I32 = torch.int32
CASES = {
    "axis0": (torch.zeros(3, 4), torch.tensor([[2, 0, 1, 2]], dtype=I32), torch.arange(4.0).reshape(1, 4), 0),
    "axis1_partial": (torch.randn(2, 5), torch.tensor([[4, 0], [1, 3]], dtype=I32), torch.randn(2, 2), 1),
    "fp16": (torch.randn(2, 3).half(), torch.tensor([[1], [0]], dtype=I32), torch.randn(2, 1).half(), 1),
    "int64": (torch.arange(6).reshape(3, 2), torch.tensor([[0, 2]], dtype=I32), torch.tensor([[-7, -8]]), 0),
    "bool_rank3": (torch.zeros(2, 2, 3, dtype=torch.bool), torch.tensor([[[2]], [[0]]], dtype=I32),
                   torch.ones(2, 1, 1, dtype=torch.bool), 2),
}


@pytest.mark.parametrize("data, indices, updates, axis", CASES.values(), ids=CASES.keys())
def test_scatter_matches_torch_scatter(run_network, data, indices, updates, axis):
    out = run_network(_scatter(axis), [data, indices, updates])
    torch.testing.assert_close(out, torch.scatter(data, axis, indices.long(), updates))


def test_scatter_layer_type_and_attributes():
    network = trt.Builder(trt.Logger()).create_network(0)
    data, indices = network.add_input("d", trt.float32, (2, 3)), network.add_input("i", trt.int32, (2, 3))
    layer = network.add_scatter(data, indices, data, trt.ScatterMode.ELEMENT)
    assert (layer.type, layer.axis, layer.mode) == (trt.LayerType.SCATTER, 0, trt.ScatterMode.ELEMENT)


F32_23, I32_23 = ((2, 3), trt.float32), ((2, 3), trt.int32)
REFUSALS = {
    "int64_indices": ([F32_23, ((2, 3), trt.int64), F32_23], "indices must be INT32"),
    "updates_dtype": ([F32_23, I32_23, ((2, 3), trt.float16)], "must have the data's dtype"),
    "indices_rank": ([F32_23, ((3,), trt.int32), ((3,), trt.float32)], "must have the rank of data"),
    "updates_shape": ([F32_23, ((2, 2), trt.int32), F32_23], "must have the shape of indices"),
    "uint8_data": ([((2, 3), trt.uint8), I32_23, ((2, 3), trt.uint8)], "does not accept torch.uint8"),
}


@pytest.mark.parametrize("specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_scatter_refusals(refused, specs, message):
    assert message in refused(lambda net, d, i, u: net.add_scatter(d, i, u, trt.ScatterMode.ELEMENT), specs)


BUILD_REFUSALS = {
    "axis_out_of_range": (2, trt.ScatterMode.ELEMENT, "axis 2 is out of range"),
    "nd_mode": (0, trt.ScatterMode.ND, "ELEMENT mode only"),
}


@pytest.mark.parametrize("axis, mode, message", BUILD_REFUSALS.values(), ids=BUILD_REFUSALS.keys())
def test_scatter_refused_at_build(refused_at_build, axis, mode, message):
    def define(net, data, indices, updates):
        layer = net.add_scatter(data, indices, updates, mode)
        layer.axis = axis
        return layer
    assert message in refused_at_build(define, [F32_23, I32_23, F32_23])


def test_a_valid_nd_scatter_is_refused_as_unimplemented_not_as_an_invalid_element_scatter(refused_at_build):
    """data (3, 4), indices (2, 1), updates (2, 4): ONNX's ScatterND, whose shapes break ELEMENT's rules."""
    message = refused_at_build(lambda net, d, i, u: net.add_scatter(d, i, u, trt.ScatterMode.ND),
                               [((3, 4), trt.float32), ((2, 1), trt.int32), ((2, 4), trt.float32)])
    assert "ELEMENT mode only" in message and "shape of indices" not in message


def test_scatter_out_of_range_index_fails_at_run_time(run_network):
    with pytest.raises(RuntimeError, match="outside \\[0, 3\\)"):
        run_network(_scatter(1), [torch.zeros(1, 3), torch.tensor([[3]], dtype=I32), torch.ones(1, 1)])
