"""The partition check: compile on the reference target, assert the segment kinds, compare with eager.

    check_partition(Model(), [torch.randn(3, 4)], "ETE", min_block_size=3)

`kinds` spells the segments in execution order, E for an engine and T for PyTorch. The report
from torch_trt.explain and the compiled graph's engine calls must both agree with it, and the
compiled module must give eager's outputs (lists, tuples and non-tensors included).
"""

import pytest
import torch

import torch_trt

KINDS = {"E": "engine", "T": "torch"}


def _clones(inputs):
    return [t.clone() for t in inputs]


def _assert_same(actual, expected):
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for got, want in zip(actual, expected):
            _assert_same(got, want)
    else:
        assert actual == expected


def check_partition(module, inputs, kinds, device="cpu", **settings):
    """Assert the segments spelled by `kinds` and eager's outputs on `device`; return (compiled module, report)."""
    module, inputs = module.to(device), [t.to(device) for t in inputs]
    settings = {"target": "reference", **settings}
    report = torch_trt.explain(module, _clones(inputs), **settings)
    assert report.kinds == [KINDS[k] for k in kinds], str(report)
    compiled = torch_trt.compile(module, _clones(inputs), **settings)
    assert str(compiled.graph).count("torch_trt::execute_engine(") == kinds.count("E"), str(compiled.graph)
    with torch.no_grad():
        expected, actual = module(*_clones(inputs)), compiled(*_clones(inputs))
    _assert_same(actual, expected)
    return compiled, report


@pytest.fixture(name="check_partition")
def check_partition_fixture():
    return check_partition
