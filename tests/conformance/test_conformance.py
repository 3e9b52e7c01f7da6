"""The pipeline and the reference use only TensorRT 11.4's real Python API (names, arguments, enums).

`test_pipeline_uses_only_real_tensorrt_api` runs last (see tests/conftest.py) and checks every
use the session recorded; the other tests show the checker catching mistakes and check the
reference's own public surface against the bindings manifest.
"""

import pathlib
import subprocess
import sys
import types

import pytest
import torch

import torch_trt
from conformance.manifest import Manifest
from conformance.recorder import recording, report, violations
from conformance.surface import surface_problems
from torch_trt.conversion import registry

MANIFEST = Manifest()


def test_pipeline_uses_only_real_tensorrt_api(api_recorder):
    """Every attribute, call and enum member the tests made the pipeline use exists in TensorRT 11.4."""
    api_recorder.checked = True
    found = violations(api_recorder, MANIFEST)
    assert not found, report(found, MANIFEST)


def test_reference_surface_exists_in_tensorrt():
    """Every public name, attribute, method, parameter and enum member of the reference is real TensorRT 11.4."""
    from torch_trt.targets import reference

    problems = surface_problems(reference, MANIFEST)
    assert not problems, "\n".join(problems)


class ITensor:  # a reference that drifted from TensorRT, for the test below
    def __init__(self):
        self.dynamic_range = None

    dtype = property(lambda self: None, lambda self, value: None)

    def set_dynamic_range(self, min, max):
        pass


class INetworkDefinition:
    def add_activation(self, input, kind):
        pass


def test_reference_surface_check_catches_drift():
    from torch_trt.targets.reference.enums import _enum

    drifted = types.ModuleType(__name__)
    drifted.ITensor, drifted.INetworkDefinition = ITensor, INetworkDefinition
    drifted.DataType = _enum("DataType", FLOAT=0, HALF=2, FP16X=12)
    drifted.add_relu = lambda network, input: None
    problems = "\n".join(surface_problems(drifted, MANIFEST))
    for expected in ("reference lets you set ITensor.dtype, but ITensor.dtype is read-only",
                     "reference ITensor.set_dynamic_range does not exist", "reference ITensor.dynamic_range does not",
                     "INetworkDefinition.add_activation parameter 1 is 'kind'", "DataType.HALF = 2, TensorRT",
                     "DataType.FP16X is not a member", "reference exports add_relu"):
        assert expected in problems, problems


def _compile_relu():
    module = torch.nn.ReLU().eval()
    x = torch.randn(2, 3)
    compiled = torch_trt.compile(module, inputs=[x], target="reference", min_block_size=1,
                                 require_full_compilation=True)
    return compiled(x)


@pytest.fixture
def relu_converter(monkeypatch):
    """Replace aten::relu's converter for one test: fixture(function) installs `function(ctx, node, args)`."""
    key = ("aten::relu", "")

    def install(function):
        monkeypatch.setitem(registry.CONVERTERS, key, registry.Registration(function, registry.CONVERTERS[key].schema))

    return install


def test_runtime_path_is_recorded():
    with recording() as recorder:
        _compile_relu()
    calls = {(k[1], k[2]) for k in recorder.records if k[0] == "call"}
    expected = {("Builder", "__init__"), ("INetworkDefinition", "add_input"), ("INetworkDefinition", "add_activation"),
                ("INetworkDefinition", "mark_output"), ("Builder", "build_serialized_network"),
                ("Runtime", "__init__"), ("Runtime", "deserialize_cuda_engine"),
                ("ICudaEngine", "create_execution_context"), ("ICudaEngine", "get_tensor_name"),
                ("ICudaEngine", "get_tensor_mode"), ("ICudaEngine", "get_tensor_profile_shape"),
                ("IExecutionContext", "set_input_shape"), ("IExecutionContext", "set_tensor_address"),
                ("IExecutionContext", "get_tensor_shape"), ("IExecutionContext", "execute_async_v3"),
                ("IErrorRecorder", "__init__")}
    assert expected <= calls, sorted(expected - calls)
    assert ("enum", "ActivationType", "RELU") in recorder.records
    assert not violations(recorder, MANIFEST), report(violations(recorder, MANIFEST), MANIFEST)


def test_misspelled_argument_is_reported(relu_converter):
    """A converter calling add_activation(input=x, kind=...) fails the check, naming the call and the line."""
    def relu(ctx, node, args):
        layer = ctx.net.add_activation(input=args[0].itensor(), kind=ctx.trt.ActivationType.RELU)
        return ctx.set_output(node, layer)

    relu_converter(relu)
    with recording() as recorder, pytest.raises(Exception):
        _compile_relu()
    found = violations(recorder, MANIFEST)
    assert len(found) == 1, report(found, MANIFEST)
    problem, _, location = found[0]
    assert "INetworkDefinition.add_activation(input=, kind=)" in problem and "no parameter named 'kind'" in problem
    assert location.endswith(f"test_conformance.py:{relu.__code__.co_firstlineno + 1}")


def test_api_the_reference_has_but_tensorrt_lacks_is_reported(relu_converter, monkeypatch):
    """Had the reference grown a convenience TensorRT lacks, converters using it would fail the check."""
    from torch_trt.targets import reference

    def add_relu(network, input):
        return network.add_activation(input, reference.ActivationType.RELU)

    monkeypatch.setattr(reference.INetworkDefinition, "add_relu", add_relu, raising=False)
    relu_converter(lambda ctx, node, args: ctx.set_output(node, ctx.net.add_relu(args[0].itensor())))
    with recording() as recorder:
        _compile_relu()
    problems = [problem for problem, _, _ in violations(recorder, MANIFEST)]
    assert problems == ["INetworkDefinition.add_relu does not exist in TensorRT 11.4.0.106"]


def test_a_run_without_the_final_check_still_fails():
    """Running a subset (here one file whose test passes) still checks what it recorded, at session end."""
    example = pathlib.Path(__file__).with_name("misuse_example.py")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(example)],
                            cwd=example.parents[2], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed" in result.stdout and "TensorRT API conformance" in result.stdout
    assert "IActivationLayer._network does not exist in TensorRT 11.4.0.106" in result.stdout
    assert "misuse_example.py:13" in result.stdout
