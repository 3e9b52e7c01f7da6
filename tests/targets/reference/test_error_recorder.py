"""IErrorRecorder in the reference: errors go to the recorder of the object that failed, inherited from its creator
(builder -> network, runtime -> engine -> execution context), and to the logger only where there is none."""

import pytest
import torch

import torch_trt.targets.reference as trt

from .conftest import host_engine


class _Recorder(trt.IErrorRecorder):
    def __init__(self):
        trt.IErrorRecorder.__init__(self)
        self.reports = []

    def num_errors(self):
        return len(self.reports)

    def get_error_code(self, arg0):
        return self.reports[arg0][0]

    def get_error_desc(self, arg0):
        return self.reports[arg0][1]

    def has_overflowed(self):
        return False

    def clear(self):
        self.reports.clear()

    def report_error(self, arg0, arg1):
        self.reports.append((arg0, arg1))
        return True


class _Logger(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))


def test_network_and_build_errors_go_to_the_builders_recorder():
    logger, recorder = _Logger(), _Recorder()
    builder = trt.Builder(logger)
    builder.error_recorder = recorder
    network = builder.create_network(0)
    assert network.error_recorder is recorder
    network.add_input("x", trt.float32, (2,))
    assert network.add_input("x", trt.float32, (2,)) is None
    assert builder.build_serialized_network(network, builder.create_builder_config()) is None  # no outputs
    assert [code for code, _ in recorder.reports] == [trt.ErrorCodeTRT.INVALID_ARGUMENT] * 2
    assert "already exists" in recorder.reports[0][1] and "no outputs" in recorder.reports[1][1]
    assert not [m for m in logger.messages if m[0] == trt.ILogger.ERROR]


def test_without_a_recorder_errors_are_logged():
    logger = _Logger()
    network = trt.Builder(logger).create_network(0)
    network.add_input("x", trt.float32, (2,))
    network.add_input("x", trt.float32, (2,))
    assert [severity for severity, _ in logger.messages] == [trt.ILogger.ERROR]


def test_engines_and_contexts_inherit_the_runtimes_recorder():
    builder = trt.Builder(_Logger())
    network = builder.create_network(0)
    x = network.add_input("x", trt.float32, (2, 0))
    network.mark_output(network.add_identity(x).get_output(0))
    for tensor in (x, network.get_output(0)):
        tensor.location = trt.TensorLocation.HOST
    plan = builder.build_serialized_network(network, builder.create_builder_config())
    logger, recorder = _Logger(), _Recorder()
    runtime = trt.Runtime(logger)
    runtime.error_recorder = recorder
    assert runtime.deserialize_cuda_engine(b"not a plan") is None
    engine = runtime.deserialize_cuda_engine(plan)
    context = engine.create_execution_context()
    assert engine.error_recorder is recorder and context.error_recorder is recorder
    empty = torch.empty(2, 0)
    context.set_tensor_address("x", empty.data_ptr())
    context.set_tensor_address(network.get_output(0).name, 0)
    assert not context.execute_async_v3(0)  # a null output address is refused
    assert [desc.split(":")[0] for _, desc in recorder.reports] == ["deserialize_cuda_engine", "execute_async_v3"]
    assert not [m for m in logger.messages if m[0] == trt.ILogger.ERROR]


@pytest.fixture
def dynamic_context():
    """(context, recorder): an execution context of x (-1, 3) -> relu, profile 1..8, reporting to `recorder`."""
    _, engine = host_engine(lambda network, x: network.add_activation(x, trt.ActivationType.RELU).get_output(0),
                            shape=(-1, 3))
    context = engine.create_execution_context()
    context.error_recorder = _Recorder()
    return context, context.error_recorder


def test_refused_context_calls_report_why(dynamic_context):
    """TensorRT's calls return False and report the error; the runtime names it when execution fails."""
    context, recorder = dynamic_context
    x, y = torch.randn(2, 3), torch.empty(2, 3)
    assert not context.set_input_shape("y", (2, 3))
    assert not context.set_input_shape("x", (9, 3))
    assert not context.execute_async_v3(0)
    assert context.set_input_shape("x", (2, 3))
    assert not context.execute_async_v3(0)
    context.set_tensor_address("x", 0)
    context.set_tensor_address("y", y.data_ptr())
    assert not context.execute_async_v3(0)
    assert [desc for _, desc in recorder.reports] == [
        "set_input_shape: 'y' is not an input of the engine",
        "set_input_shape: shape (9, 3) of 'x' is outside the optimization profile's min (1, 3) and max (8, 3)",
        "execute_async_v3: the shape of input 'x' is not set (set_input_shape)",
        "execute_async_v3: the address of 'x' is not set (set_tensor_address)",
        "execute_async_v3: input 'x' has a null address"]
    context.set_tensor_address("x", x.data_ptr())
    assert context.execute_async_v3(0)
    torch.testing.assert_close(y, x.relu())


def test_an_outputs_shape_has_its_dynamic_dims_until_the_inputs_shapes_are_set(dynamic_context):
    context, _ = dynamic_context
    assert tuple(context.get_tensor_shape("y")) == (-1, 3)
    context.set_input_shape("x", (5, 3))
    assert tuple(context.get_tensor_shape("y")) == (5, 3)
