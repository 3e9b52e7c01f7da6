"""benchmarks/coverage.py: per model nodes in engines, engines, fallbacks by op and reason, and the total line."""

import importlib.util
import pathlib
from collections import Counter

import pytest
import torch
from torch import nn

from torch_trt.conversion.registry import CONVERTERS

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "coverage.py"
_spec = importlib.util.spec_from_file_location("coverage_report", _PATH)
coverage_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage_report)


def mlp(width):
    """linear, relu, linear, relu: more nodes than the default min_block_size."""
    return nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())


class AddcmulBetweenMLPs(nn.Module):
    """Two convertible runs around aten::addcmul, which has no converter on the TorchScript path."""

    def __init__(self):
        super().__init__()
        self.before, self.after = mlp(8), mlp(8)

    def forward(self, x, gate):
        return self.after(torch.addcmul(self.before(x), gate, gate))


class GraphBreak(nn.Module):
    """Two dynamo graphs, split by a graph break."""

    def __init__(self):
        super().__init__()
        self.before, self.after = mlp(8), mlp(8)

    def forward(self, x):
        y = self.before(x)
        torch._dynamo.graph_break()
        return self.after(y)


def test_a_fallback_is_counted_by_op_and_reason_between_two_engines():
    assert ("aten::addcmul", "") not in CONVERTERS, "aten::addcmul got a converter: pick another op for this test"
    row = coverage_report.coverage("addcmul", AddcmulBetweenMLPs().eval(), [torch.randn(2, 8), torch.randn(2, 8)])
    assert row["fallbacks"] == Counter({("aten::addcmul", "no converter"): 1})
    assert row["engines"] == 2 and row["engine_nodes"] == row["nodes"] - 1
    line = coverage_report.markdown_row(row, dynamo=False)
    assert f"| {row['nodes'] - 1}/{row['nodes']} | {100 * (row['nodes'] - 1) / row['nodes']:.1f}% | 2 |" in line
    assert line.endswith("| aten::addcmul: no converter x1 |")


def test_dynamo_counts_engine_calls_per_graph_and_the_error_against_eager():
    torch._dynamo.reset()
    calls, (absolute, relative) = coverage_report.dynamo_engine_calls(GraphBreak().eval(), [torch.randn(2, 8)])
    assert calls == [1, 1] and 0 <= absolute < 1e-5 and 0 <= relative < 1e-5


def test_total_line_sums_the_models_and_counts_those_fully_converted():
    rows = [{"model": "a", "engine_nodes": 3, "nodes": 4, "engines": 2, "fallbacks": Counter({("aten::x", "c"): 1}),
             "engine_calls": [2]},
            {"model": "b", "engine_nodes": 5, "nodes": 5, "engines": 1, "fallbacks": Counter(), "engine_calls": [1, 0]},
            {"model": "c", "error": "LoweringError: no"}]
    assert coverage_report.total_row(rows, dynamo=True) == (
        "| total (1 of 3 models fully converted) | 8/9 | 88.9% | 3 | 1 node(s) in PyTorch | 3 graph(s), 3 engine call(s) |")


def test_prints_a_markdown_table_for_a_zoo_model_and_a_failing_one(monkeypatch, capsys):
    def failing():
        raise AssertionError("never built")

    models = coverage_report.available_models()
    monkeypatch.setattr(coverage_report, "available_models", lambda: {**models, "broken": lambda: (torch.nn.Identity(), [])})
    monkeypatch.setattr(coverage_report, "coverage", lambda name, model, inputs, dynamo: failing())
    coverage_report.main(["--models", "broken"])
    assert "| broken | - | - | - | error: AssertionError: never built |" in capsys.readouterr().out

    monkeypatch.undo()
    rows = coverage_report.main(["--models", "vit", "--dynamo"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| model | nodes in engines |") and lines[1].startswith("|---|")
    assert lines[2].startswith("| vit | ") and lines[3].startswith("| total (")
    assert rows[0]["engines"] >= 1 and 0 < rows[0]["engine_nodes"] <= rows[0]["nodes"]
    assert sum(rows[0]["engine_calls"]) >= 1


def test_torchvision_models_are_listed_when_importable_else_skipped_with_a_note(capsys):
    names = set(coverage_report.available_models())
    try:
        import torchvision  # noqa: F401
    except ImportError:
        assert not names & set(coverage_report.TORCHVISION)
        assert "note: torchvision models skipped" in capsys.readouterr().err
    else:
        assert set(coverage_report.TORCHVISION) <= names
    assert {"bert", "gpt2", "vit"} <= names


@pytest.fixture(autouse=True)
def fresh_dynamo_for_each_test():
    yield
    torch._dynamo.reset()
