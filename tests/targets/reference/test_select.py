import pytest
import torch

import torch_trt.targets.reference as trt

COND = torch.tensor([[True], [False]])
CASES = {
    "float32_broadcast": (COND, torch.randn(2, 3), torch.randn(1, 3)),
    "condition_broadcast": (torch.tensor([[True, False, True]]), torch.randn(2, 3), torch.randn(2, 3)),
    "int32": (COND, torch.arange(6, dtype=torch.int32).reshape(2, 3), torch.full((2, 1), -1, dtype=torch.int32)),
    "int64": (COND, torch.arange(2).reshape(2, 1), torch.arange(3).reshape(1, 3)),
    "bool": (COND, torch.ones(2, 3, dtype=torch.bool), torch.zeros(2, 3, dtype=torch.bool)),
    "fp16": (COND, torch.randn(2, 3).half(), torch.randn(2, 3).half()),
    "bf16": (COND, torch.randn(2, 3).bfloat16(), torch.randn(2, 3).bfloat16()),
    "rank0": (torch.tensor(False), torch.tensor(1.0), torch.tensor(2.0)),
}


@pytest.mark.parametrize("condition, then_value, else_value", CASES.values(), ids=CASES.keys())
def test_select_matches_torch_where(run_network, condition, then_value, else_value):
    out = run_network(lambda net, c, t, e: net.add_select(c, t, e).get_output(0), [condition, then_value, else_value])
    torch.testing.assert_close(out, torch.where(condition, then_value, else_value))


def _select(net, c, t, e):
    return net.add_select(c, t, e)


BOOL_23, F32_23 = ((2, 3), trt.bool), ((2, 3), trt.float32)
REFUSALS = {
    "condition_dtype": ([((2, 3), trt.int32), F32_23, F32_23], "condition must be BOOL"),
    "rank": ([BOOL_23, F32_23, ((3,), trt.float32)], "same rank"),
    "broadcast": ([BOOL_23, F32_23, ((2, 2), trt.float32)], "not broadcastable"),
    "then_else_dtype": ([BOOL_23, F32_23, ((2, 3), trt.float16)], "same dtype"),
    "int8": ([BOOL_23, ((2, 3), trt.int8), ((2, 3), trt.int8)], "does not accept torch.int8"),
}


@pytest.mark.parametrize("specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_select_refusals(refused, specs, message):
    assert message in refused(_select, specs)


def test_select_layer_type():
    network = trt.Builder(trt.Logger()).create_network(0)
    inputs = [network.add_input(f"in{i}", dtype, (2,)) for i, dtype in enumerate((trt.bool, trt.float32, trt.float32))]
    assert network.add_select(*inputs).type == trt.LayerType.SELECT
