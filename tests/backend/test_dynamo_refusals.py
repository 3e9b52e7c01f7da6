"""Through torch.compile, a node refused at conversion runs in PyTorch and the rest of the graph keeps its engines."""

import torch

from dynamo_harness import check_compiled, engine_calls


class CeilModePool(torch.nn.Module):
    def forward(self, x):  # TensorRT's ceil-mode windows here would both drop and add input positions
        return torch.relu(torch.nn.functional.max_pool2d(x * 2, (1, 3), 2, ceil_mode=True))


def test_one_refused_node_costs_only_itself(builds):
    check_compiled(CeilModePool(), [[torch.randn(1, 2, 6, 6)]])
    assert len(builds) == 1 and engine_calls(builds) == 2
    assert "max_pool2d" in str(builds[0][1].graph)
