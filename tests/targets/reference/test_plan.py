"""The reference plan's blob is safetensors: any safetensors reader, and our own in place, gets every weight back,
bit for bit; one whose tensors do not tile its data is refused."""

import json
import struct

import pytest
import safetensors.torch
import torch

from torch_trt.targets.reference.plan import FORMAT, VERSION, PlanError, _safetensors_bytes, deserialize

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


def _plan_blob(tensors):
    return _safetensors_bytes(tensors, {"format": FORMAT, "plan": json.dumps({"version": VERSION})})


@pytest.mark.parametrize("names", [list(WEIGHTS), []], ids=["all", "none"])
def test_deserialize_reads_back_what_the_plan_wrote_as_views_of_its_memory(names):
    """A transformer's plan is hundreds of MB: its weights are read in place, not copied."""
    tensors = {name: WEIGHTS[name] for name in names}
    blob = _plan_blob(tensors)
    _, loaded = deserialize(blob)
    assert loaded.keys() == tensors.keys()
    start, end = torch.frombuffer(blob, dtype=torch.uint8).data_ptr(), len(blob)
    for name, tensor in tensors.items():
        assert loaded[name].dtype == tensor.dtype and loaded[name].shape == tensor.shape, name
        assert torch.equal(_bits(loaded[name]), _bits(tensor)), name
        assert not tensor.numel() or start <= loaded[name].data_ptr() < start + end, name
    assert deserialize(bytes(blob))[1].keys() == tensors.keys()  # read-only bytes are copied once, then read


def _with_header_entry(blob, name, **changes):
    """`blob` with the safetensors header entry `name` changed."""
    size = struct.unpack_from("<Q", blob)[0]
    header = json.loads(bytes(blob[8:8 + size]))
    header[name].update(changes)
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + bytes(blob[8 + size:])


@pytest.mark.parametrize("changes", [{"dtype": "F64"}, {"data_offsets": [4, 52]}, {"shape": [3, 5]},
                                     {"shape": [-1, 1], "data_offsets": [0, -4]}],
                         ids=["unknown_dtype", "gap", "wrong_size", "negative_size"])
def test_a_plan_whose_tensors_do_not_tile_its_data_is_corrupted(changes):
    blob = _plan_blob({"a": torch.randn(3, 4)})
    with pytest.raises(PlanError, match="corrupted"):
        deserialize(_with_header_entry(blob, "a", **changes))
    with pytest.raises(PlanError, match="corrupted"):
        deserialize(bytes(blob) + b"extra")
