"""Refusals only conversion can see move their node to PyTorch: the compile succeeds, the other engines stay,
explain() reports the same segments as compile() builds, and require_full_compilation raises instead."""

import logging

import pytest
import torch
import torch.nn.functional as F

import torch_trt
from torch_trt.errors import Code, ConversionError


class Elu(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten.elu(torch.relu(x) * 2, 1.0, 2.0, 1.0) + 1


class UnevenAdaptivePool(torch.nn.Module):
    def forward(self, x):
        return torch.relu(F.adaptive_avg_pool2d(x * 2, (3, 3)))


class ZeroDimSoftmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax((x * 2).sum(), 0) * 3


class RuntimeWeight(torch.nn.Module):
    def forward(self, x, w):
        return torch.relu(F.conv2d(x * 2, w * 3))


CASES = [  # model, inputs, the op refused at conversion
    (Elu(), [torch.randn(3, 4)], "aten::elu"),
    (UnevenAdaptivePool(), [torch.randn(1, 2, 7, 7)], "aten::adaptive_avg_pool2d"),
    (ZeroDimSoftmax(), [torch.randn(3, 4)], "aten::softmax"),
    (RuntimeWeight(), [torch.randn(1, 2, 5, 5), torch.randn(4, 2, 3, 3)], "aten::_convolution"),
]


IDS = [op.split("::")[1] for _, _, op in CASES]


@pytest.mark.parametrize("model, inputs, op", CASES, ids=IDS)
def test_refused_node_runs_in_pytorch_and_the_engines_stay(model, inputs, op, check_partition):
    _, report = check_partition(model, inputs, "ETE", min_block_size=1)
    (node, reason), = report.fallbacks
    assert node.startswith(op) and reason.code == Code.CONVERTER_REFUSED, report


@pytest.mark.parametrize("model, inputs, op", CASES, ids=IDS)
def test_full_compilation_raises_the_refusal(model, inputs, op):
    with pytest.raises(ConversionError, match=f"while converting {op}"):
        torch_trt.compile(model, inputs, target="reference", min_block_size=1, require_full_compilation=True)


def test_a_compile_with_no_engine_says_so(caplog):
    class OnlyUnsupported(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0)

    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch_trt.compile(OnlyUnsupported(), [torch.randn(3)], target="reference")
    assert "torch_trt::execute_engine" not in str(compiled.graph)
    assert "compiled nothing" in caplog.text and "no converter" in caplog.text, caplog.text
