"""Through torch.compile, a node refused at conversion runs in PyTorch and the rest of the graph keeps its engines; a
graph whose results cannot leave an engine runs in PyTorch."""

import pytest
import torch

from dynamo_harness import check_compiled, engine_calls


class CeilModePool(torch.nn.Module):
    def forward(self, x):  # TensorRT's ceil-mode windows here would both drop and add input positions
        return torch.relu(torch.nn.functional.max_pool2d(x * 2, (1, 3), 2, ceil_mode=True))


def test_one_refused_node_costs_only_itself(builds):
    check_compiled(CeilModePool(), [[torch.randn(1, 2, 6, 6)]])
    assert len(builds) == 1 and engine_calls(builds) == 2
    assert "max_pool2d" in str(builds[0][1].graph)


def _nonzero_positions(x):
    return torch.nonzero(x > 0.5)


def _columns_counted_from_data(x):
    return x[:, :int(x[0, 0].abs() * 3) + 1]


@pytest.mark.parametrize("function,reason", [
    (_nonzero_positions, "torch_trt compiled nothing"),  # nonzero has no converter
    (_columns_counted_from_data, "reads a tensor's value into a Python number"),
])
def test_a_result_sized_by_data_runs_in_pytorch(function, reason, caplog):
    """With dynamo's capture flags, such a result reached the signature's layout checks as an unbacked size, whose
    guard raised GuardOnDataDependentSymNode out of torch.compile."""
    x = torch.randn(3, 4).abs()
    with torch._dynamo.config.patch(capture_scalar_outputs=True, capture_dynamic_output_shape_ops=True):
        torch._dynamo.reset()
        with torch.no_grad():
            result = torch.compile(function, backend="tensorrt")(x)
        torch._dynamo.reset()
    assert torch.equal(result, function(x)) and reason in caplog.text


def _scaled_by_its_sum(x):
    return x * x.sum().item()


def _sum_and_double(x):
    return x.sum().item(), x * 2


@pytest.mark.parametrize("function", [_scaled_by_its_sum, _sum_and_double])
def test_a_number_read_from_a_tensor_in_the_graph_runs_in_pytorch_not_fixed_at_the_first_calls_value(function, caplog):
    """capture_scalar_outputs keeps .item() in the graph; the trace into TorchScript made its value a constant."""
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        torch._dynamo.reset()
        compiled = torch.compile(function, backend="tensorrt", options={"min_block_size": 1})
        with torch.no_grad():
            for value in (1.0, 2.0, 3.0):
                x = torch.full((4,), value)
                torch.testing.assert_close(compiled(x), function(x))
        torch._dynamo.reset()
    assert "reads a tensor's value into a Python number" in caplog.text
