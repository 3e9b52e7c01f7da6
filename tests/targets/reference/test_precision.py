"""Networks are strongly typed, as TensorRT 11 builds every network: no precision flags or per-layer precision,
read-only tensor dtypes, and each layer computing in its tensors' dtype (fp16 in, fp16 arithmetic out)."""

import pytest
import torch

import torch_trt
import torch_trt.targets.reference as trt
from torch_trt._settings import CompileSettings
from torch_trt.conversion.context import ConversionCtx
from torch_trt.targets.target_logger import target_logger
from torch_trt.targets.reference.program import CODEGEN_LEVEL
from torch_trt.targets.tensorrt import api_manifest

SINCE_10 = api_manifest()["changed_since_10"]["10.13.3.9"]  # what 11.x removed from 10.13


def _layer():
    network = trt.Builder(trt.Logger()).create_network(0)
    return network, network.add_identity(network.add_input("x", trt.float16, (2,)))


def test_tensor_dtype_is_read_only():
    network, layer = _layer()
    for tensor in (network.get_input(0), layer.get_output(0)):
        with pytest.raises(AttributeError):
            tensor.dtype = trt.float32
    assert layer.get_output(0).dtype == trt.float16 and layer.get_output_type(0) == trt.float16


@pytest.mark.parametrize("member", SINCE_10["enum_members_removed"]["BuilderFlag"])
def test_builder_has_no_precision_flags(member):
    assert not hasattr(trt.BuilderFlag, member)


@pytest.mark.parametrize("owner, name", [(owner, name) for key in ("methods_removed", "attributes_removed")
                                         for owner, names in SINCE_10[key].items() if owner in ("ILayer", "ITensor")
                                         for name in names])
def test_weak_typing_api_is_gone(owner, name):
    """ILayer.precision / set_output_type / ..., ITensor.dynamic_range / set_dynamic_range: 10.x only."""
    network, layer = _layer()
    target = layer if owner == "ILayer" else layer.get_output(0)
    assert not hasattr(target, name)
    with pytest.raises(AttributeError):
        setattr(target, name, trt.float32)


@pytest.mark.parametrize("name", SINCE_10["attributes_removed"]["IBuilderConfig"])
def test_builder_config_has_no_calibration(name):
    config = trt.Builder(trt.Logger()).create_builder_config()
    with pytest.raises(AttributeError):
        setattr(config, name, None)


def test_conversion_creates_strongly_typed_networks():
    ctx = ConversionCtx(trt, trt.Builder(target_logger(trt)), CompileSettings(target="reference"))
    assert ctx.net.get_flag(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    assert ctx.net.flags == 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)


class _TwoSums(torch.nn.Module):
    def forward(self, x, y):
        return (x + y) + y


def _two_sums(device, optimization_level):
    """(1 + 2^-11) + 2^-11 in an fp16 engine: 1 if each sum rounds to fp16 (to even), 1 + 2^-10 if the first stays
    wider."""
    x = torch.ones(4, dtype=torch.float16, device=device)
    y = torch.full((4,), 2.0 ** -11, dtype=torch.float16, device=device)
    compiled = torch_trt.compile(_TwoSums().eval(), inputs=[x, y], target="reference", min_block_size=1,
                                 require_full_compilation=True, optimization_level=optimization_level)
    result = compiled(x, y)
    assert result.dtype == torch.float16
    return result, ((x.float() + y.float()) + y.float()).half()


def test_layers_run_one_by_one_round_each_result_to_its_dtype(device):
    result, in_fp32 = _two_sums(device, optimization_level=1)
    assert torch.equal(result, torch.ones_like(result)) and not torch.equal(result, in_fp32)


def test_generated_kernels_keep_float32_intermediates_as_tensorrts_fused_kernels_do(device):
    result, in_fp32 = _two_sums(device, optimization_level=CODEGEN_LEVEL[torch.device(device).type])
    assert torch.equal(result, in_fp32) and not torch.equal(result, torch.ones_like(result))


def test_half_network_outputs_stay_half(run_network):
    x = torch.randn(3, 4, dtype=torch.float16)

    def define(net, a):
        return net.add_reduce(a, trt.ReduceOperation.SUM, 0b10, False).get_output(0)

    result = run_network(define, [x])
    assert result.dtype == torch.float16
    torch.testing.assert_close(result, x.sum(1), rtol=1e-3, atol=1e-3)
