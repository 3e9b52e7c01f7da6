"""Helpers for reference-target tests: build a small network, run it, or see it refused (by add_* or the builder)."""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt


class RecordingLogger(trt.ILogger):
    def __init__(self):
        self.messages = []

    def log(self, severity, msg):
        self.messages.append((severity, msg))

    def errors(self):
        return [msg for severity, msg in self.messages if severity == trt.ILogger.ERROR]


def host_engine(define, shape=(2, 3), level=3, input_type=trt.float32, location=trt.TensorLocation.HOST):
    """(output ITensor, deserialized engine) of define(network, x) -> output, for an input `x` (host FLOAT unless
    told) declared with `shape` (-1: dynamic, profile 1..8), built at builder_optimization_level `level`."""
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    x = network.add_input("x", input_type, shape)
    output = define(network, x)
    assert output is not None, logger.errors()
    output.name = "y"
    network.mark_output(output)
    for tensor in (x, output):
        tensor.location = location
    config = builder.create_builder_config()
    config.builder_optimization_level = level
    if -1 in shape:
        profile = builder.create_optimization_profile()
        profile.set_shape("x", *[[size if d == -1 else d for d in shape] for size in (1, 4, 8)])
        config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    assert plan is not None, logger.errors()
    return output, trt.Runtime(logger).deserialize_cuda_engine(plan)


def shuffled(network, tensor, first=None, reshape=None, second=None):
    """The output of a shuffle layer of `tensor` with the given first transpose, reshape dims and second transpose."""
    layer = network.add_shuffle(tensor)
    if first is not None:
        layer.first_transpose = first
    if reshape is not None:
        layer.reshape_dims = reshape
    if second is not None:
        layer.second_transpose = second
    return layer.get_output(0)


def program_and_kernels(define, shape):
    """(generated program, class names of the kernels it calls in order) of host_engine(define, shape)."""
    program = host_engine(define, shape=shape)[1]._module
    kernels = [type(node.target.__self__).__name__ for node in program.graph.nodes
               if node.op == "call_function" and hasattr(node.target, "__self__")]
    return program, kernels


def aten_ops(program, x):
    """The ATen ops `program` runs on `x`, in order."""
    return [str(node.target) for node in make_fx(program)(x).graph.nodes if node.op == "call_function"]


def build_and_run(define, inputs, device="cpu"):
    """define(network, *input_itensors) -> output ITensor or list; build and run on `inputs` (tensors)."""
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    itensors = [network.add_input(f"in{i}", trt.DataType(_TRT[t.dtype]), tuple(t.shape)) for i, t in enumerate(inputs)]
    outputs = define(network, *itensors)
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    assert all(o is not None for o in outputs), f"network refused: {logger.errors()}"
    location = trt.TensorLocation.HOST if torch.device(device).type == "cpu" else trt.TensorLocation.DEVICE
    for i, tensor in enumerate(outputs):
        tensor.name = f"out{i}"
        network.mark_output(tensor)
    for tensor in itensors + outputs:
        tensor.location = location
    plan = builder.build_serialized_network(network, builder.create_builder_config())
    assert plan is not None, f"build refused: {logger.errors()}"
    engine = trt.Runtime(logger).deserialize_cuda_engine(plan)
    context = engine.create_execution_context()
    inputs = [t.to(device).contiguous() for t in inputs]
    for i, t in enumerate(inputs):
        context.set_input_shape(f"in{i}", tuple(t.shape))
        context.set_tensor_address(f"in{i}", t.data_ptr())
    results = []
    for i in range(len(outputs)):
        name = f"out{i}"
        out = torch.empty(tuple(context.get_tensor_shape(name)),
                          dtype=trt.types.TORCH_DTYPE[engine.get_tensor_dtype(name)], device=device)
        placeholder = torch.empty(1, dtype=torch.uint8, device=device)  # TensorRT refuses a null output address
        context.set_tensor_address(name, out.data_ptr() if out.numel() else placeholder.data_ptr())
        results.append((out, placeholder))
    assert context.execute_async_v3(0)
    results = [out for out, _ in results]
    return results[0] if len(results) == 1 else results


def refusal(define, input_specs):
    """define(network, *itensors) must return None (refused); return the logged error text."""
    logger = RecordingLogger()
    network = trt.Builder(logger).create_network(0)
    itensors = [network.add_input(f"in{i}", dtype, shape) for i, (shape, dtype) in enumerate(input_specs)]
    assert define(network, *itensors) is None, "TensorRT would refuse this network, the reference accepted it"
    return " ".join(logger.errors())


def refusal_at_build(define, input_specs, profile=None):
    """define(network, *itensors) -> ILayer, ITensor or a list of them; their outputs are marked and the network built:
    it must be refused by then (None from define means an add_* already refused it). Return the logged errors.
    `profile` ({input name: (min, opt, max)}) adds an optimization profile."""
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    itensors = [network.add_input(f"in{i}", dtype, shape) for i, (shape, dtype) in enumerate(input_specs)]
    result = define(network, *itensors)
    if result is not None:
        for item in result if isinstance(result, (list, tuple)) else [result]:
            network.mark_output(item.get_output(0) if isinstance(item, trt.ILayer) else item)
        config = builder.create_builder_config()
        if profile:
            optimization_profile = builder.create_optimization_profile()
            for name, shapes in profile.items():
                optimization_profile.set_shape(name, *shapes)
            config.add_optimization_profile(optimization_profile)
        assert builder.build_serialized_network(network, config) is None, \
            "TensorRT would refuse to build this network, the reference built it"
    return " ".join(logger.errors())


_TRT = {torch.float32: 0, torch.float16: 1, torch.int8: 2, torch.int32: 3, torch.bool: 4, torch.uint8: 5,
        torch.bfloat16: 7, torch.int64: 8}


@pytest.fixture
def run_network():
    return build_and_run


@pytest.fixture
def refused():
    return refusal


@pytest.fixture
def refused_at_build():
    return refusal_at_build
