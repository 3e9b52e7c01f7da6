"""A network rule that a node's layers break is that node's refusal: it moves to PyTorch, and only it."""

import torch

import torch_trt
from torch_trt.errors import Code

DYNAMIC_ROW = torch_trt.Input(min_shape=(2,), opt_shape=(4,), max_shape=(8,))


class PairsOfADynamicRow(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-1, 2)


class DoubledPairsOfADynamicRow(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-1, 2) * 2


def _refused_ops(report):
    assert all(reason.code is Code.CONVERTER_REFUSED for _, reason in report.fallbacks)
    return [node.split(" ")[0] for node, _ in report.fallbacks]


def test_a_broken_rule_is_the_node_whose_layers_break_it(device):
    """The reference checks a reshape of a dynamic dim when its output's shape is read (at its probe size, odd, so
    it refuses (-1, 2)): the next reader, aten::mul, was blamed and moved to PyTorch with it."""
    module = torch.jit.script(DoubledPairsOfADynamicRow())
    report = torch_trt.explain(module, [DYNAMIC_ROW], target="reference", min_block_size=1)
    assert _refused_ops(report) == ["aten::reshape"] and report.engine_count == 1
    compiled = torch_trt.compile(module, [DYNAMIC_ROW], target="reference", min_block_size=1, device=device)
    x = torch.arange(6.0, device=device)
    torch.testing.assert_close(compiled(x), x.reshape(-1, 2) * 2)


def test_a_broken_rule_of_an_output_is_its_node_not_an_error_out_of_the_compile(device):
    """With nothing reading the reshape's output, the first read was the marking of the engine's outputs, outside
    any converter, and its NetworkError left the compile."""
    module = torch.jit.script(PairsOfADynamicRow())
    report = torch_trt.explain(module, [DYNAMIC_ROW], target="reference", min_block_size=1)
    assert _refused_ops(report) == ["aten::reshape"] and "volume not divisible" in str(report)
    compiled = torch_trt.compile(module, [DYNAMIC_ROW], target="reference", min_block_size=1, device=device)
    x = torch.arange(6.0, device=device)
    torch.testing.assert_close(compiled(x), x.reshape(-1, 2))


class ScaledByItsLengthPastAnother(torch.nn.Module):
    def forward(self, x, past):
        rest = x[:, past.shape[1]:]
        return rest * rest.shape[1]


def test_a_size_of_two_dynamic_dims_is_not_taken_for_a_static_one(device):
    """The reference probes every dynamic dim at one size, so x[:, past.shape[1]:] was 0 wide at both probes and its
    width a static 0: the engine returned zeros. The builder checks the static dims at the profile's shapes and
    refuses; the nodes run in PyTorch."""
    module = torch.jit.script(ScaledByItsLengthPastAnother())
    specs = [torch_trt.Input(min_shape=(1, 3), opt_shape=(1, 8), max_shape=(1, 13)),
             torch_trt.Input(min_shape=(1, 1), opt_shape=(1, 2), max_shape=(1, 3))]
    compiled = torch_trt.compile(module, specs, target="reference", min_block_size=1, device=device)
    for width, past in ((8, 2), (5, 3), (13, 1)):
        x, p = torch.randn(1, width, device=device), torch.randn(1, past, device=device)
        torch.testing.assert_close(compiled(x, p), module(x, p))


class ScaledByTheLengthPastAnother(torch.nn.Module):
    def forward(self, x, past):
        return x * x[:, past.shape[1]:].size(1)


def test_a_size_read_from_a_tensor_no_layer_reads_is_checked_too(device):
    """The slice is read only by aten::size, which the converter evaluated from the static 0 it was given."""
    module = torch.jit.script(ScaledByTheLengthPastAnother())
    specs = [torch_trt.Input(min_shape=(1, 3), opt_shape=(1, 8), max_shape=(1, 13)),
             torch_trt.Input(min_shape=(1, 1), opt_shape=(1, 2), max_shape=(1, 3))]
    compiled = torch_trt.compile(module, specs, target="reference", min_block_size=1, device=device)
    x, p = torch.randn(1, 8, device=device), torch.randn(1, 2, device=device)
    torch.testing.assert_close(compiled(x, p), module(x, p))
