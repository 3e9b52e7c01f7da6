"""Through torch.compile, a node refused at conversion runs in PyTorch and the rest of the graph keeps its engines."""

import torch

from dynamo_harness import check_compiled, engine_calls


class UnevenAdaptivePool(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.nn.functional.adaptive_avg_pool2d(x * 2, (3, 3)))


def test_one_refused_node_costs_only_itself(builds):
    check_compiled(UnevenAdaptivePool(), [[torch.randn(1, 2, 7, 7)]])
    assert len(builds) == 1 and engine_calls(builds) == 2
    assert "aten::adaptive_avg_pool2d" in str(builds[0][1].graph)
