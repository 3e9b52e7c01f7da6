"""Every refusal moves only its node to PyTorch: the compile succeeds, the other engines stay, explain() reports
the segments compile() builds, and require_full_compilation raises instead. A converter's `supports` predicate
refuses at partitioning; what only conversion can see (shapes, runtime weights) is refused there and re-partitioned."""

import logging

import pytest
import torch
import torch.nn.functional as F

import torch_trt
from torch_trt.errors import Code, ConversionError, UnsupportedOperatorError


class Elu(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten.elu(torch.relu(x) * 2, 1.0, 2.0, 1.0) + 1


class CeilModePool(torch.nn.Module):
    def forward(self, x):  # TensorRT's ceil-mode windows here would both drop and add input positions
        return torch.relu(F.max_pool2d(x * 2, (1, 3), 2, ceil_mode=True))


class ZeroDimSoftmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax((x * 2).sum(), 0) * 3


class RuntimeWeight(torch.nn.Module):
    def forward(self, x, w):
        return torch.relu(F.conv2d(x * 2, w * 3))


CASES = [  # model, inputs, the refused op, the reason's code, the error full compilation raises
    (Elu(), [torch.randn(3, 4)], "aten::elu", Code.UNSUPPORTED_ARGUMENTS, UnsupportedOperatorError),
    (CeilModePool(), [torch.randn(1, 2, 6, 6)], "aten::max_pool2d", Code.CONVERTER_REFUSED, ConversionError),
    (ZeroDimSoftmax(), [torch.randn(3, 4)], "aten::softmax", Code.CONVERTER_REFUSED, ConversionError),
    (RuntimeWeight(), [torch.randn(1, 2, 5, 5), torch.randn(4, 2, 3, 3)], "aten::_convolution",
     Code.CONVERTER_REFUSED, ConversionError),
]


IDS = [case[2].split("::")[1] for case in CASES]


@pytest.mark.parametrize("model, inputs, op, code, error", CASES, ids=IDS)
def test_refused_node_runs_in_pytorch_and_the_engines_stay(model, inputs, op, code, error, check_partition):
    _, report = check_partition(model, inputs, "ETE", min_block_size=1)
    (node, reason), = report.fallbacks
    assert node.startswith(op) and reason.code == code, report


@pytest.mark.parametrize("model, inputs, op, code, error", CASES, ids=IDS)
def test_full_compilation_raises_the_refusal(model, inputs, op, code, error):
    with pytest.raises(error, match=op):
        torch_trt.compile(model, inputs, target="reference", min_block_size=1, require_full_compilation=True)


def test_a_compile_with_no_engine_says_so(caplog):
    class OnlyUnsupported(torch.nn.Module):
        def forward(self, x):
            return torch.ops.torch_trt_test.opaque(x, 0)

    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch_trt.compile(OnlyUnsupported(), [torch.randn(3)], target="reference")
    assert "torch_trt::execute_engine" not in str(compiled.graph)
    assert "compiled nothing" in caplog.text and "no converter" in caplog.text, caplog.text
