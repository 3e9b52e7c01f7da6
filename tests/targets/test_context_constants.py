"""ConversionCtx.constant within TensorRT's rules: zero-volume constants, which add_constant refuses, are a
one-element constant sliced empty."""

import pytest
import torch

import torch_trt.targets.reference as trt
from torch_trt._settings import CompileSettings
from torch_trt.conversion.context import ConversionCtx
from torch_trt.targets.target_logger import target_logger
from torch_trt.runtime.engine_manager import EngineRunner


@pytest.mark.parametrize("value", [torch.zeros(2, 0), torch.zeros(0, dtype=torch.int32), torch.ones(3, 0, 2).bool()])
def test_zero_volume_constant_builds_and_runs(value):
    builder = trt.Builder(target_logger(trt))
    ctx = ConversionCtx(trt, builder, CompileSettings(target="reference"))
    x = ctx.net.add_input("input_0", trt.float32, (1,))
    output = ctx.constant(value)
    output.name = "output_0"
    ctx.net.mark_output(output)
    for tensor in (x, output):
        tensor.location = trt.TensorLocation.HOST
    constants = [ctx.net.get_layer(i) for i in range(ctx.net.num_layers)
                 if ctx.net.get_layer(i).type == trt.LayerType.CONSTANT]
    assert constants and all(0 not in tuple(layer.shape) for layer in constants)
    config = builder.create_builder_config()
    engine = builder.build_serialized_network(ctx.net.definition, config)
    assert engine is not None, ctx.network_errors()
    (result,) = EngineRunner(bytes(engine), "reference", torch.device("cpu"))([torch.zeros(1)])
    assert result.shape == value.shape and result.dtype == value.dtype
