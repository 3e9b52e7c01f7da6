import pytest
import torch

import torch_trt.targets.reference as trt


# (inputs, axis or None for the default, expected dim of torch.cat)
CASES = {
    "rank4_default_axis": ([torch.randn(1, 2, 3, 4), torch.randn(1, 3, 3, 4), torch.randn(1, 1, 3, 4)], None, 1),
    "rank2_default_axis": ([torch.randn(2, 3), torch.randn(4, 3)], None, 0),
    "rank3_last_axis": ([torch.randn(2, 3, 1), torch.randn(2, 3, 5)], 2, 2),
    "single_input": ([torch.randn(3, 2)], 1, 1),
    "empty_part": ([torch.randn(2, 0), torch.randn(2, 3)], 1, 1),
    "int32": ([torch.arange(6, dtype=torch.int32).reshape(2, 3), torch.ones(2, 1, dtype=torch.int32)], 1, 1),
    "int64": ([torch.arange(4).reshape(4, 1), torch.arange(4).reshape(4, 1)], 0, 0),
    "bool": ([torch.tensor([[True], [False]]), torch.tensor([[False, True], [True, True]])], 1, 1),
    "fp16": ([torch.randn(2, 2).half(), torch.randn(2, 2).half()], 1, 1),
}


@pytest.mark.parametrize("tensors, axis, dim", CASES.values(), ids=CASES.keys())
def test_concatenation_matches_torch_cat(run_network, tensors, axis, dim):
    def define(net, *inputs):
        layer = net.add_concatenation(list(inputs))
        if axis is not None:
            layer.axis = axis
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, tensors), torch.cat(tensors, dim))


@pytest.mark.parametrize("rank, axis", [(1, 0), (2, 0), (3, 0), (4, 1), (5, 2)])
def test_concatenation_default_axis(rank, axis):
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_concatenation([network.add_input("x", trt.float32, (2,) * rank)])
    assert (layer.type, layer.axis) == (trt.LayerType.CONCATENATION, axis)


def _concat(axis=None):
    """A define that concatenates all its inputs and sets axis; refused_at_build marks and builds it."""
    def define(net, *inputs):
        layer = net.add_concatenation(list(inputs))
        if layer is None:
            return None
        if axis is not None:
            layer.axis = axis
        return layer
    return define


F32_23 = ((2, 3), trt.float32)
REFUSALS = {
    "no_inputs": (_concat(), [], "at least one input"),
    "rank": (_concat(), [F32_23, ((2, 3, 1), trt.float32)], "same rank"),
    "dtype": (_concat(), [F32_23, ((2, 3), trt.float16)], "same dtype"),
    "uint8": (_concat(), [((2,), trt.uint8), ((2,), trt.uint8)], "does not accept torch.uint8"),
    "axis_range": (_concat(axis=2), [F32_23, F32_23], "axis 2 is out of range for rank 2"),
    "negative_axis": (_concat(axis=-1), [F32_23, F32_23], "axis -1 is out of range"),
    "other_dims": (_concat(axis=1), [F32_23, ((3, 3), trt.float32)], "differ in a dim other than axis 1"),
}


@pytest.mark.parametrize("define, specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_concatenation_refusals(refused_at_build, define, specs, message):
    assert message in refused_at_build(define, specs)
