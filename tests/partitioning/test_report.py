"""The partition report: explain(), its text, debug=True logging it, and full compilation's error."""

import logging
import os
from pathlib import Path

import pytest
import torch

import torch_trt
from torch_trt.errors import UnsupportedOperatorError
from torch_trt.partitioning.support import Code
from conformance.recorded_run import run_recorded


class Mixed(torch.nn.Module):
    def forward(self, x):
        y = torch.sigmoid(torch.relu(x) * 2 + 1) - 0.5
        if bool(y.sum() > 0):
            y = y * 2
        return torch.tanh(torch.ops.torch_trt_test.opaque(y, 0) * 3 + 1).abs() - 1


def _explain(**settings):
    return torch_trt.explain(Mixed(), [torch.randn(3, 4)], target="reference", **settings)


def test_report_lists_segments_ops_shapes_and_reasons():
    report = _explain(torch_executed_ops={"aten::tanh"})
    assert report.kinds == ["engine", "torch"]  # the engine blocks left after tanh are under min_block_size
    engine, fallback = report.segments
    assert engine.ops == ["aten::relu", "aten::mul", "aten::add", "aten::sigmoid", "aten::sub", "aten::sum", "aten::gt"]
    assert engine.inputs == ["%x.1 (3, 4):float32"] and engine.node_count == 7
    codes = {reason.code for _, reason in fallback.reasons}
    assert codes == {Code.NO_CONVERTER, Code.DATA_DEPENDENT, Code.CONTROL_FLOW, Code.USER_REQUEST, Code.SMALL_BLOCK}
    text = str(report)
    for expected in ("TensorRT engine: 7 node(s)", "prim::If has sub-blocks", "sent to PyTorch by torch_executed_ops",
                     "torch_trt_test::opaque [torch_trt_test::opaque(", "fewer than min_block_size=5", "(3, 4):float32"):
        assert expected in text, text


def test_full_compilation_raises_with_every_reason():
    with pytest.raises(UnsupportedOperatorError) as caught:
        torch_trt.compile(Mixed(), [torch.randn(3, 4)], target="reference", require_full_compilation=True)
    reasons = {reason.code for _, reason in caught.value.reasons}
    assert reasons == {Code.NO_CONVERTER, Code.DATA_DEPENDENT, Code.CONTROL_FLOW}
    assert "prim::If" in str(caught.value) and "torch_trt_test::opaque [torch_trt_test::opaque(" in str(caught.value)


def test_full_compilation_ignores_min_block_size():
    class Tiny(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    compiled = torch_trt.compile(Tiny(), [torch.randn(2)], target="reference", require_full_compilation=True)
    assert "torch_trt::execute_engine" in str(compiled.graph)


def test_debug_logs_the_report(caplog):
    torch_trt.compile(Mixed(), [torch.randn(3, 4)], target="reference", debug=True)
    assert "torch_trt partition: 3 segment(s)" in caplog.text
    assert logging.getLogger("torch_trt").level == logging.NOTSET  # restored after the call


def test_fallbacks_warn_once():
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("torch_trt").addHandler(handler)
    try:
        torch_trt.compile(Mixed().eval(), [torch.randn(3, 4)], target="reference")
    finally:
        logging.getLogger("torch_trt").removeHandler(handler)
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "run in PyTorch" in warnings[0], warnings


@pytest.mark.parametrize("op", ["aten::linear", "aten::batch_norm"])
def test_executed_ops_that_lowering_rewrote_are_named_in_a_warning(caplog, op):
    """aten::linear lowers to aten::matmul and aten::add, a batch norm after a convolution folds into it: the entry
    keeps nothing in PyTorch, which the report alone would not say."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                torch.nn.Linear(16, 2)).eval()
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        report = torch_trt.explain(model, [torch.randn(1, 3, 4, 4)], target="reference", min_block_size=1,
                                   torch_executed_ops={op})
    assert report.engine_count == 1 and not report.fallbacks
    assert f"torch_executed_ops keeps nothing in PyTorch for {op}: no op of the lowered graph" in caplog.text


def test_executed_ops_that_match_a_node_warn_of_nothing_unmatched(caplog):
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        torch_trt.explain(Mixed().eval(), [torch.randn(3, 4)], target="reference",
                          torch_executed_ops={"aten::relu"})
    assert "keeps nothing" not in caplog.text


SCRIPT = """
import torch, torch_trt, opaque_op
from torch import nn
class M(nn.Module):
    def forward(self, x):
        return torch.ops.torch_trt_test.opaque(torch.sigmoid(torch.relu(x) * 2 + 1) - 0.5, 0)
torch_trt.compile(M(), [torch.randn(3, 4)], target="reference", debug=True)
"""


def test_debug_report_is_visible_without_logging_configured():
    tests = str(Path(__file__).parents[1])  # where opaque_op.py is
    result = run_recorded(SCRIPT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": tests})
    assert result.returncode == 0, result.stderr
    assert "torch_trt partition: 2 segment(s)" in result.stderr, result.stderr
