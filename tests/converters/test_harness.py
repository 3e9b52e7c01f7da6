"""The harness checks what it claims: both front doors, every output, and a dynamic case off its opt shape."""

import pytest
import torch

import harness
import torch_trt
from harness import check_converter, dynamic_inputs


class DropsLastOutput:
    """A compiled module that loses its last output, as a compiler bug could."""

    def __init__(self, compiled):
        self.compiled, self.graph = compiled, compiled.graph

    def __call__(self, *inputs):
        return self.compiled(*inputs)[:-1]


class Compiles:
    """Stands in for torch_trt.compile: records the modules it gets; `drop_last` wraps results in DropsLastOutput."""

    def __init__(self, real_compile):
        self.real_compile, self.received, self.drop_last = real_compile, [], False

    def __call__(self, module, **settings):
        self.received.append(module)
        compiled = self.real_compile(module, **settings)
        return DropsLastOutput(compiled) if self.drop_last else compiled


@pytest.fixture
def compiles(monkeypatch):
    stand_in = Compiles(torch_trt.compile)
    monkeypatch.setattr(harness.torch_trt, "compile", stand_in)
    return stand_in


def test_each_case_is_compiled_scripted_and_traced(compiles):
    check_converter(lambda x: torch.relu(x) * 2, [torch.randn(2, 3)], {"aten::relu"}, "cpu")
    graphs = [str(module.graph) for module in compiles.received]
    assert len(graphs) == 2 and all(isinstance(m, torch.jit.ScriptModule) for m in compiles.received)
    assert "<scripted lambda at test_harness.py" in graphs[0] and "Float(2, 3" in graphs[1]  # traced: shapes


def test_a_missing_output_fails(compiles):
    compiles.drop_last = True
    with pytest.raises(AssertionError, match="is 1 outputs, eager gives 2 outputs"):
        check_converter(lambda x: (torch.relu(x), x * 2), [torch.randn(2, 3)], {"aten::relu"}, "cpu")


def test_a_dynamic_case_must_run_off_its_opt_shape():
    specs, _ = dynamic_inputs([((1, 3), (4, 3), (8, 3), (6, 3))], torch.float32)
    with pytest.raises(AssertionError, match="a shape other than opt"):
        check_converter(torch.relu, [torch.randn(4, 3)], {"aten::relu"}, "cpu", specs=specs)


def test_trace_only_needs_a_reason():
    with pytest.raises(ValueError, match="reason"):
        harness.trace_only(torch.relu, "")
