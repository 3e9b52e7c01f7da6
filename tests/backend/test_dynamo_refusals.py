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


@pytest.mark.parametrize("function", [_nonzero_positions, _columns_counted_from_data])
def test_a_result_sized_by_data_runs_in_pytorch(function, caplog):
    """With dynamo's capture flags, such a result reached the signature's layout checks as an unbacked size, whose
    guard raised GuardOnDataDependentSymNode out of torch.compile."""
    x = torch.randn(3, 4).abs()
    with torch._dynamo.config.patch(capture_scalar_outputs=True, capture_dynamic_output_shape_ops=True):
        torch._dynamo.reset()
        with torch.no_grad():
            result = torch.compile(function, backend="tensorrt")(x)
        torch._dynamo.reset()
    assert torch.equal(result, function(x)) and "a result's layout follows tensor data" in caplog.text
