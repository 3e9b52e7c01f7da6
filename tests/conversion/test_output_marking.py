"""Marking a graph's outputs reads their tensors: a network rule found broken there is the node's refusal."""

import torch

import torch_trt
from torch_trt.errors import Code


class PairsOfADynamicRow(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-1, 2)


def test_a_rule_broken_where_outputs_are_marked_moves_the_node_to_pytorch():
    """The reference checks a reshape of a dynamic dim when its output is read (at its probe size, odd); the first
    read was the output's marking, outside any converter, and its NetworkError left the compile."""
    spec = torch_trt.Input(min_shape=(2,), opt_shape=(4,), max_shape=(8,))
    module = torch.jit.script(PairsOfADynamicRow())
    report = torch_trt.explain(module, [spec], target="reference", min_block_size=1)
    assert [reason.code for _, reason in report.fallbacks] == [Code.CONVERTER_REFUSED]
    assert "volume not divisible" in str(report)
    compiled = torch_trt.compile(module, [spec], target="reference", min_block_size=1)
    x = torch.arange(6.0)
    torch.testing.assert_close(compiled(x), x.reshape(-1, 2))
