import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt


def _cumulative(axis, exclusive=False, reverse=False, axis_dtype=np.int32, axis_shape=()):
    def define(net, a):
        axis_tensor = net.add_constant(axis_shape, np.array(axis, dtype=axis_dtype).reshape(axis_shape or 1))
        layer = net.add_cumulative(a, axis_tensor.get_output(0), trt.CumulativeOperation.SUM, exclusive, reverse)
        return None if layer is None else layer.get_output(0)
    return define


def _expected(x, dim, exclusive, reverse):
    flipped = x.flip(dim) if reverse else x
    total = flipped.cumsum(dim, dtype=x.dtype) - (flipped if exclusive else 0)
    return total.flip(dim) if reverse else total


@pytest.mark.parametrize("shape, axis", [((7,), 0), ((3, 5), 1), ((3, 5), -2), ((2, 3, 4), -1)])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_prefix_sums_match_pytorch(run_network, shape, axis, exclusive, reverse):
    x = torch.randn(shape)
    result = run_network(_cumulative(axis, exclusive, reverse), [x])
    torch.testing.assert_close(result, _expected(x, axis, exclusive, reverse))


def test_inclusive_forward_values(run_network):
    x = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
    result = run_network(_cumulative(1, axis_dtype=np.int64), [x])
    assert torch.equal(result, torch.tensor([[1, 3, 6], [4, 9, 15]], dtype=torch.int32))


def _axis_from_input(net, a, axis):
    layer = net.add_cumulative(a, axis, trt.CumulativeOperation.SUM, False, False)
    return None if layer is None else layer.get_output(0)


def test_refused_when_the_axis_is_not_a_constant(refused):
    message = refused(_axis_from_input, [((2, 3), trt.float32), ((), trt.int32)])
    assert "IConstantLayer" in message


REFUSED = {
    "bool": ((2, 3), trt.bool, _cumulative(1), "does not accept torch.bool"),
    "axis_out_of_range": ((2, 3), trt.float32, _cumulative(2), "out of range"),
    "axis_1d": ((2, 3), trt.float32, _cumulative(1, axis_shape=(1,)), "0-D INT32/INT64"),
    "axis_float": ((2, 3), trt.float32, _cumulative(1, axis_dtype=np.float32), "0-D INT32/INT64"),
}


@pytest.mark.parametrize("shape, dtype, define, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, define, message):
    assert message in refused(define, [(shape, dtype)])
