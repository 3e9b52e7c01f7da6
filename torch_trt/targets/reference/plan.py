"""The reference engine's serialized form: one safetensors blob, no pickle.

The safetensors header's metadata holds the plan as JSON (IO tensors, profiles, layers with
their attributes and input/output tensor names); each layer's Weights are tensors of the same
blob. A corrupted or foreign blob fails to parse with a clear error and executes nothing.
"""

import json
import math
import struct

import torch

from . import enums
from .network import dependency_order
from .types import Dims, IHostMemory, Permutation, Weights

FORMAT = "torch_trt.reference.plan"
VERSION = 1


class PlanError(ValueError):
    """The bytes are not a reference plan this version can read."""


def _encode(value):
    if isinstance(value, enums._Enum):
        return {"enum": type(value).__name__, "name": value.name}
    if isinstance(value, Permutation):
        return list(value)
    if isinstance(value, (Dims, tuple, list)):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot serialize attribute value {value!r}")


def _decode(value):
    if isinstance(value, dict):
        return getattr(getattr(enums, value["enum"]), value["name"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _dataflow_names(network):
    """{id(tensor): the name the plan links it by}: its own, made unique with primes where another tensor has it
    (TensorRT links tensors, not names: an intermediate may share an input's name); inputs and outputs keep theirs,
    which bind them."""
    names = {id(t): t.name for t in network._inputs + network._outputs}
    taken = set(names.values())
    for layer in network._layers:
        for tensor in layer._outputs:
            if id(tensor) not in names:
                name = tensor.name
                while name in taken:
                    name += "'"
                names[id(tensor)] = name
                taken.add(name)
    return names


def serialize(network, profiles, optimization_level, tf32):
    """Serialize a validated network, its optimization profiles, the builder_optimization_level and whether float32
    matrix products and convolutions may use TF32 (BuilderFlag.TF32) into plan bytes (an IHostMemory)."""
    tensors, layers, names = {}, [], _dataflow_names(network)
    for index, layer in enumerate(dependency_order(network._layers)):
        attributes, weights = {}, {}
        for name in layer._attributes:
            value = getattr(layer, name)
            if name in layer._weight_attributes:
                values = None if value is None else value._as_torch()
                if values is not None:  # an empty array still records its dtype
                    key = f"{index}.{name}"
                    tensors[key] = values
                    weights[name] = key
            else:
                attributes[name] = _encode(value)
        layers.append({
            "class": type(layer).__name__, "name": layer.name, "attributes": attributes, "weights": weights,
            "inputs": [None if t is None else names[id(t)] for t in layer._inputs],
            "outputs": [names[id(t)] for t in layer._outputs],
        })
    io = [{"name": t.name, "mode": "INPUT", "dtype": t.dtype.name, "shape": list(t.shape),
           "location": t.location.name} for t in network._inputs]
    io += [{"name": t.name, "mode": "OUTPUT", "dtype": t.dtype.name, "shape": list(t.shape),
            "location": t.location.name} for t in network._outputs]
    plan = {"version": VERSION, "name": network.name, "io": io, "profiles": profiles, "layers": layers,
            "optimization_level": optimization_level, "tf32": tf32}
    return _safetensors_bytes(tensors, {"format": FORMAT, "plan": json.dumps(plan)})


# The safetensors format's names of the dtypes Weights hold (DataType's: FLOAT, HALF, BF16, INT8, ..., FP8).
_SAFETENSORS_DTYPE = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int8: "I8",
                      torch.int32: "I32", torch.int64: "I64", torch.bool: "BOOL", torch.uint8: "U8",
                      torch.float8_e4m3fn: "F8_E4M3"}


def _safetensors_bytes(tensors, metadata):
    """The safetensors blob of `tensors` (name -> CPU tensor) and string `metadata` as an IHostMemory: each tensor
    copied once into one buffer (safetensors.torch.save copies each three times, seconds for a BERT-base)."""
    header, size = {"__metadata__": metadata}, 0
    tensors = dict(sorted(tensors.items(), key=lambda item: -item[1].element_size()))  # each one aligned
    for name, tensor in tensors.items():
        header[name] = {"dtype": _SAFETENSORS_DTYPE[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [size, size + tensor.nbytes]}
        size += tensor.nbytes
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # the data starts 8-byte aligned, as safetensors writes it
    start = 8 + len(encoded)
    blob = IHostMemory(start + size)
    blob[:start] = struct.pack("<Q", len(encoded)) + encoded
    for name, tensor in tensors.items():
        begin, end = header[name]["data_offsets"]
        if end > begin:
            target = torch.frombuffer(blob, dtype=torch.uint8, count=end - begin, offset=start + begin)
            target.copy_(tensor.contiguous().reshape(-1).view(torch.uint8))
    return blob


def deserialize(data):
    """Parse plan bytes (any buffer) into (plan dict, weight tensors); PlanError for anything else. The tensors view
    the buffer's memory when it is writable (a transformer's weights are hundreds of MB): it must not change."""
    try:
        view = memoryview(data).cast("B")
    except TypeError as error:
        raise PlanError(f"a serialized engine is a buffer (bytes, bytearray, memoryview): {error}") from None
    if view.readonly:  # torch cannot view read-only memory
        view = memoryview(bytearray(view))
    if len(view) < 8:
        raise PlanError("serialized engine is truncated (fewer than 8 bytes)")
    (header_size,) = struct.unpack_from("<Q", view)
    if header_size > len(view) - 8:
        raise PlanError("serialized engine is truncated or corrupted (header size exceeds the data)")
    try:
        header = json.loads(bytes(view[8:8 + header_size]))
        metadata = header.pop("__metadata__", None) or {}
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError) as error:
        raise PlanError(f"serialized engine header is corrupted: {error}") from None
    if metadata.get("format") != FORMAT:
        raise PlanError("bytes are not a torch_trt reference engine (missing format marker)")
    try:
        plan = json.loads(metadata["plan"])
        tensors = _tensor_views(view[8 + header_size:], header)
    except (KeyError, TypeError, ValueError, RuntimeError) as error:  # JSONDecodeError is a ValueError
        raise PlanError(f"serialized engine is corrupted: {type(error).__name__}: {error}") from None
    if plan.get("version") != VERSION:
        raise PlanError(f"reference engine format version {plan.get('version')} is not supported (expected {VERSION})")
    return plan, tensors


_TORCH_DTYPE = {name: dtype for dtype, name in _SAFETENSORS_DTYPE.items()}


def _tensor_views(data, header):
    """name -> tensor over `data` for each safetensors header entry, once the entries are checked to tile `data`
    exactly, in order and each aligned to its element size (as _safetensors_bytes writes them)."""
    tensors, end = {}, 0
    for name, entry in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        dtype, shape, (begin, stop) = _TORCH_DTYPE[entry["dtype"]], entry["shape"], entry["data_offsets"]
        count = math.prod(shape)
        fits = min(shape, default=0) >= 0 and stop - begin == count * dtype.itemsize
        if begin != end or not fits or begin % dtype.itemsize:
            raise ValueError(f"tensor {name!r} ({entry}) does not follow the previous one at byte {end}")
        tensors[name] = torch.frombuffer(data, dtype=dtype, count=count, offset=begin).reshape(shape) if count \
            else torch.empty(shape, dtype=dtype)
        end = stop
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes after the last tensor")
    return tensors


def restore_layer(layer_classes, record, tensors):
    """Rebuild a layer object (without a network) from its record, for execution."""
    cls = layer_classes.get(record["class"])
    if cls is None:
        raise PlanError(f"serialized engine uses unknown layer class {record['class']!r}")
    layer = object.__new__(cls)
    for name, value in record["attributes"].items():
        object.__setattr__(layer, name, _decode(value))
    for name in cls._weight_attributes:
        key = record["weights"].get(name)
        object.__setattr__(layer, name, None if key is None else tensors[key])
    object.__setattr__(layer, "name", record["name"])
    return layer


__all__ = ["PlanError", "serialize", "deserialize", "restore_layer", "Weights"]
