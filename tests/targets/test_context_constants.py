"""ConversionCtx.constant within TensorRT's rules: zero-volume constants, which add_constant refuses, are a
one-element constant sliced empty; bfloat16 constants, which numpy cannot hold, are read from the tensor's memory;
bool and uint8 constants, which Weights cannot hold, are cast from types that cast to them."""

import pytest
import torch

import torch_trt.targets.reference as trt
from torch_trt._settings import CompileSettings
from torch_trt.conversion.context import ConversionCtx
from torch_trt.targets.target_logger import target_logger
from torch_trt.runtime.engine_manager import EngineRunner


def _built(value):
    """(constant layers of the network, the engine's output) for a network returning ctx.constant(value)."""
    builder = trt.Builder(target_logger(trt))
    ctx = ConversionCtx(trt, builder, CompileSettings(target="reference"))
    x = ctx.net.add_input("input_0", trt.float32, (1,))
    output = ctx.constant(value)
    output.name = "output_0"
    ctx.net.mark_output(output)
    for tensor in (x, output):
        tensor.location = trt.TensorLocation.HOST
    layers = [ctx.net.get_layer(i) for i in range(ctx.net.num_layers)]
    engine = builder.build_serialized_network(ctx.net.definition, builder.create_builder_config())
    assert engine is not None, ctx.network_errors()
    (result,) = EngineRunner(bytes(engine), "reference", torch.device("cpu"))([torch.zeros(1)])
    return layers, result


@pytest.mark.parametrize("value", [torch.zeros(2, 0), torch.zeros(0, dtype=torch.int32), torch.ones(3, 0, 2).bool()])
def test_zero_volume_constant_builds_and_runs(value):
    layers, result = _built(value)
    constants = [layer for layer in layers if layer.type == trt.LayerType.CONSTANT]
    assert constants and all(0 not in tuple(layer.shape) for layer in constants)
    assert result.shape == value.shape and result.dtype == value.dtype


@pytest.mark.parametrize("value", [torch.randn(3, 4).bfloat16(), torch.tensor(1.5, dtype=torch.bfloat16)])
def test_bfloat16_constant_is_one_bf16_constant(value):
    """No float32 copy and cast: the constant's Weights are BF16, made from the tensor's memory."""
    layers, result = _built(value)
    assert [layer.type for layer in layers] == [trt.LayerType.CONSTANT]
    assert layers[0].weights.dtype == trt.DataType.BF16
    assert torch.equal(result, value)


@pytest.mark.parametrize("value", [torch.tensor([0, 7, 255], dtype=torch.uint8), torch.tensor([True, False])])
def test_bool_and_uint8_constants_are_cast_from_types_tensorrt_casts_to_them(value):
    """UINT8 casts only to and from FLOAT and HALF (tensorrt.DataType): a uint8 constant is a float one, cast."""
    layers, result = _built(value)
    assert [layer.type for layer in layers] == [trt.LayerType.CONSTANT, trt.LayerType.CAST]
    assert torch.equal(result, value)
