"""The reference plan's blob is safetensors: any safetensors reader gets every weight back, bit for bit."""

import pytest
import safetensors.torch
import torch

from torch_trt.targets.reference.plan import _safetensors_bytes

WEIGHTS = {
    "float32": torch.randn(3, 4),
    "bfloat16": torch.randn(5).to(torch.bfloat16),
    "float16 scalar": torch.tensor(2.5, dtype=torch.float16),
    "int64": torch.arange(7),
    "bool": torch.tensor([True, False, True]),
    "empty int8": torch.empty(0, 3, dtype=torch.int8),
    "uint8 odd length": torch.arange(3, dtype=torch.uint8),
    "int32": torch.arange(4, dtype=torch.int32),
    "float8": torch.randn(4).to(torch.float8_e4m3fn),
}


@pytest.mark.parametrize("names", [list(WEIGHTS), [], ["uint8 odd length", "float32"]], ids=["all", "none", "two"])
def test_safetensors_reads_back_what_the_plan_wrote(names):
    tensors = {name: WEIGHTS[name] for name in names}
    blob = _safetensors_bytes(tensors, {"format": "test", "plan": "{}"})
    loaded = safetensors.torch.load(bytes(blob))
    assert loaded.keys() == tensors.keys()
    for name, tensor in tensors.items():
        assert loaded[name].dtype == tensor.dtype and loaded[name].shape == tensor.shape, name
        assert torch.equal(_bits(loaded[name]), _bits(tensor)), name


def _bits(tensor):
    return tensor.reshape(-1).view(torch.uint8)
