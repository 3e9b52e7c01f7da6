"""The recorder is transparent: isinstance, subclassing, identity and the target's own objects all work through
its proxies, and each use is recorded before it happens. The plugin installs it per test, unless `unrecorded`."""

import pathlib
import subprocess
import sys

import pytest
import torch

import torch_trt
from conformance.manifest import Manifest
from conformance.recorded_run import load_records
from conformance.recorder import ModuleProxy, Recorder, recording, unwrap, violations
from torch_trt.targets import reference


def _recorded():
    recorder = Recorder()
    return recorder, recorder.module(reference)


def test_proxies_pass_isinstance_and_subclassing():
    recorder, trt = _recorded()

    class Logger(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)

        def log(self, severity, msg):
            pass

    network = trt.Builder(Logger()).create_network(0)
    x = network.add_input("x", trt.float32, (2,))
    assert isinstance(x, trt.ITensor) and isinstance(x, reference.ITensor) and not isinstance(x, trt.ILayer)
    assert issubclass(Logger, trt.ILogger) and type(unwrap(x)) is reference.ITensor
    assert ("call", "ILogger", "__init__", 0, ()) in recorder.records
    assert ("call", "Builder", "__init__", 1, ()) in recorder.records


def test_same_object_same_proxy_and_the_target_sees_its_own_objects():
    recorder, trt = _recorded()
    network = trt.Builder(trt.Logger()).create_network(0)
    layer = network.add_identity(network.add_input("x", trt.float32, (2,)))
    assert layer.get_output(0) is layer.get_output(0) and network[0] is network.get_layer(0)
    network.mark_output(layer.get_output(0))
    assert unwrap(network)._outputs[0] is unwrap(layer)._outputs[0]  # the reference got its tensor, not a proxy
    assert ("call", "INetworkDefinition", "__getitem__", 1, ()) in recorder.records


def test_uses_are_recorded_even_when_they_fail():
    recorder, trt = _recorded()
    network = trt.Builder(trt.Logger()).create_network(0)
    x = network.add_input("x", trt.float32, (2,))
    with pytest.raises(TypeError):
        network.add_activation(x, kind=trt.ActivationType.RELU)
    with pytest.raises(AttributeError):
        x.dtype = trt.float16
    assert ("call", "INetworkDefinition", "add_activation", 1, ("kind",)) in recorder.records
    assert ("set", "ITensor", "dtype") in recorder.records
    assert {("module", "ActivationType"), ("enum", "ActivationType", "RELU"), ("module", "float32")} <= set(
        recorder.records)


def test_values_pass_unwrapped():
    _, trt = _recorded()
    network = trt.Builder(trt.Logger()).create_network(0)
    x = network.add_input("x", trt.float32, [2, 3])
    assert type(x.shape) is reference.Dims and x.dtype is reference.DataType.FLOAT
    assert trt.volume(x.shape) == 6 and trt.DataType(0) is reference.DataType.FLOAT


def test_a_recorded_test_gets_the_target_behind_a_proxy():
    """The plugin wraps the pipeline's resolve_target for each test; the function and its cache stay the target's."""
    from torch_trt.backend import pipeline
    from torch_trt.targets import resolve_target

    assert isinstance(pipeline.resolve_target("reference"), ModuleProxy)
    assert resolve_target("reference") is reference and resolve_target("auto", "cpu") is reference


@pytest.mark.unrecorded
def test_an_unrecorded_test_runs_the_pipeline_on_the_targets_own_objects():
    from torch_trt.backend import pipeline

    assert pipeline.resolve_target("reference") is reference
    x = torch.randn(2, 3)
    with recording() as recorder:
        compiled = torch_trt.compile(torch.nn.ReLU().eval(), inputs=[x], target="reference", min_block_size=1)
        torch.testing.assert_close(compiled(x), torch.relu(x))
    assert "torch_trt::execute_engine" in str(compiled.graph) and not recorder.records


_MISUSING_SCRIPT = '''
import torch
import torch_trt
from torch_trt.conversion import registry


def relu(ctx, node, args):
    layer = ctx.net.add_activation(args[0].itensor(), ctx.trt.ActivationType.RELU)
    assert layer._network is not None  # a reference internal: no such attribute on TensorRT's layers
    return ctx.set_output(node, layer)


key = ("aten::relu", "")
registry.CONVERTERS[key] = registry.Registration(relu, registry.CONVERTERS[key].schema)
torch_trt.compile(torch.nn.ReLU().eval(), inputs=[torch.randn(2, 3)], target="reference", min_block_size=1)
'''


def test_a_fresh_process_records_its_api_use(tmp_path):
    """recorded_run.py records in the process it starts, so a misuse there is found like one in-process."""
    script, records = tmp_path / "misuse.py", tmp_path / "records.pickle"
    script.write_text(_MISUSING_SCRIPT)
    result = subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("recorded_run.py")), str(records),
                             str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    found = violations(load_records(records), Manifest())
    assert any("_network" in problem for problem, _, _ in found), found


def test_a_serialized_engine_reaches_the_pipeline_as_a_buffer_and_its_use_is_recorded():
    """IHostMemory exports its bytes (memoryview, no copy on the real bindings); its attributes are still recorded."""
    recorder, trt = _recorded()
    builder = trt.Builder(trt.Logger())
    network = builder.create_network(0)
    network.mark_output(network.add_identity(network.add_input("x", trt.float32, (2,))).get_output(0))
    serialized = builder.build_serialized_network(network, builder.create_builder_config())
    assert serialized.nbytes == len(memoryview(serialized))
    assert trt.Runtime(trt.Logger()).deserialize_cuda_engine(memoryview(serialized)).num_io_tensors == 2
    assert ("buffer", "IHostMemory") in recorder.records and ("get", "IHostMemory", "nbytes") in recorder.records
    assert not violations(recorder, Manifest())
