"""A node reading strides (as_strided, stride, is_contiguous, storage_offset) sees eager's, not an engine's copy."""

import pytest
import torch

import torch_trt
from torch_trt.errors import Code

REFERENCE = {"target": "reference", "min_block_size": 1, "device": "cpu"}


class StridedOfATranspose(torch.nn.Module):
    def forward(self, x):
        transposed = (x + 1).t()
        return transposed.as_strided([2, 2], [1, 2]) * 1, torch.relu(x * 3) + 2


class StrideOfATranspose(torch.nn.Module):
    def forward(self, x):
        transposed = (x + 1).t()
        return transposed + transposed.stride(0), transposed * int(transposed.is_contiguous())


class StrideOfASum(torch.nn.Module):
    def forward(self, x):
        total = x + 1
        return total * total.stride(0)


CASES = [StridedOfATranspose(), StrideOfATranspose()]


@pytest.mark.parametrize("module", CASES, ids=lambda m: type(m).__name__)
def test_strides_read_are_eagers(module):
    """The transpose ran in an engine, whose contiguous output as_strided and stride read: as_strided gave
    [1, 9, 5, 2] for eager's [1, 3, 2, 4], stride 3 for eager's 1."""
    x = torch.arange(12.0).reshape(3, 4)
    compiled = torch_trt.compile(torch.jit.script(module), [x], **REFERENCE)
    for got, want in zip(compiled(x), module(x)):
        torch.testing.assert_close(got, want)
    report = torch_trt.explain(torch.jit.script(module), [x], **REFERENCE)
    kept = [node for node, reason in report.fallbacks if reason.code is Code.LAYOUT]
    assert len(kept) == 1 and "aten::t" in kept[0]
    assert report.engine_count == 1


@pytest.mark.parametrize("module", CASES, ids=lambda m: type(m).__name__)
def test_strides_read_are_eagers_through_torch_compile(module, fresh_dynamo):
    x = torch.arange(12.0).reshape(3, 4)
    compiled = torch.compile(module, backend="tensorrt", options=REFERENCE)
    for got, want in zip(compiled(x), module(x)):
        torch.testing.assert_close(got, want)


def test_a_contiguous_tensor_whose_strides_are_read_stays_in_its_engine():
    x = torch.randn(3, 4)
    report = torch_trt.explain(torch.jit.script(StrideOfASum()), [x], **REFERENCE)
    assert not [node for node, reason in report.fallbacks if reason.code is Code.LAYOUT]
    assert "aten::add" in report.segments[0].ops
