"""targets/dtypes.py, the one dtype table: every translation (torch, either target's DataType, numpy,
TorchScript's ScalarType codes) agrees with the others and with what torch and TensorRT define."""

import ast
import pathlib

import pytest
import torch

import torch_trt
import torch_trt.targets.reference as reference
from conformance.fake_tensorrt import fake_tensorrt
from torch_trt._settings import CompileSettings
from torch_trt.conversion.context import ConversionCtx
from torch_trt.targets.dtypes import (DATATYPE_NAMES, ENGINE_DTYPES, NUMPY_TYPES, SCALAR_TYPE_CODES, scalar_type,
                                      torch_dtype, trt_dtype)
from torch_trt.targets.target_logger import target_logger

TARGETS = {"reference": reference, "tensorrt_api": fake_tensorrt()}


@pytest.mark.parametrize("target", TARGETS, ids=list(TARGETS))
@pytest.mark.parametrize("dtype", DATATYPE_NAMES, ids=str)
def test_torch_and_datatype_round_trip_on_both_targets(target, dtype):
    trt = TARGETS[target]
    datatype = trt_dtype(trt, dtype)
    assert datatype == getattr(trt.DataType, DATATYPE_NAMES[dtype])
    assert torch_dtype(trt, datatype) == dtype


@pytest.mark.parametrize("dtype", [torch.float64, torch.int16, torch.complex64], ids=str)
def test_dtypes_tensorrt_lacks_are_refused(dtype):
    with pytest.raises(TypeError, match="has no TensorRT equivalent"):
        trt_dtype(reference, dtype)


def test_the_reference_tables_are_the_shared_table():
    """The reference's DataType <-> torch, nptype and DataType.itemsize all come from targets/dtypes.py."""
    for dtype, name in DATATYPE_NAMES.items():
        datatype = getattr(reference.DataType, name)
        assert reference.types.TORCH_DTYPE[datatype] == dtype and reference.types.TRT_DTYPE[dtype] == datatype
        assert datatype.itemsize == dtype.itemsize
        if dtype in NUMPY_TYPES:
            assert reference.nptype(datatype) == NUMPY_TYPES[dtype] == torch.empty(0, dtype=dtype).numpy().dtype
        else:
            with pytest.raises(TypeError):
                reference.nptype(datatype)


def _dtype_code(x: torch.Tensor) -> int:
    return x.dtype


@pytest.mark.parametrize("dtype", SCALAR_TYPE_CODES, ids=str)
def test_scalar_type_codes_are_torchscripts(dtype):
    """The code of each dtype is the int TorchScript gives for `x.dtype`, and scalar_type reads it back."""
    code = torch.jit.script(_dtype_code)(torch.empty(0, dtype=dtype))
    assert SCALAR_TYPE_CODES[dtype] == code
    assert scalar_type(code) == dtype


def test_scalar_type_of_none_and_of_an_unknown_code():
    assert scalar_type(None) is None
    with pytest.raises(TypeError, match="ScalarType code 9 has no supported torch dtype"):
        scalar_type(9)  # complex64


def test_engine_dtypes_have_datatypes_and_inputs_take_them():
    assert set(ENGINE_DTYPES) <= set(DATATYPE_NAMES)
    assert torch_trt.Input((1,), dtype=torch.float64).dtype == torch.float64  # narrowed later by truncation
    for dtype in ENGINE_DTYPES:
        assert torch_trt.Input((1,), dtype=dtype).dtype == dtype


def test_runtime_imports_nothing_from_conversion():
    """The runtime loads and runs engines; dtype tables and the target logger come from targets/, not conversion/."""
    runtime = pathlib.Path(torch_trt.__file__).parent / "runtime"
    for path in runtime.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "conversion" not in (node.module or "").split("."), f"{path.name} imports {node.module}"


def test_the_context_has_one_handle_to_the_network():
    """Converters reach the network only through ctx.net, which names layers and turns refusals into errors."""
    ctx = ConversionCtx(reference, reference.Builder(target_logger(reference)), CompileSettings(target="reference"))
    assert not hasattr(ctx, "network")
    assert isinstance(ctx.net.definition, reference.INetworkDefinition)
    assert ctx.net.num_layers == ctx.net.definition.num_layers == 0
    x = ctx.net.add_input("input_0", reference.float32, (2,))
    assert ctx.net.add_identity(x).name == "torch_trt/1"

