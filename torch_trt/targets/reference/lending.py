"""Tensors lent to the engines the reference deserializes: an engine reads a lent tensor in place of its own copy of
a weight with the same bytes.

TensorRT copies a plan's weights into each engine's device memory, and so does the reference, except under
`lending(tensors)`. torch_trt's dynamo backend builds engines from a model whose weights are already on the device:
copied, each would be held twice for as long as the model stays compiled. A lent tensor is read only where its dtype
and bytes equal a weight's when the engine loads, and the lender answers for them staying so: the dynamo backend
lends its graph's baked tensors, checks their identity and version before every call, and rebuilds when one changed.
(A write through `.data` changes no version: no engine sees it as a change, but one reading the tensor in place
reads what was written.)
"""

import contextlib
import contextvars
import logging

import torch

logger = logging.getLogger(__name__)

_PROBE_BYTES = 16  # compared on the host first, so that a weight is compared whole with one lent tensor, not all

_LENT = contextvars.ContextVar("tensors lent to engines", default=())


@contextlib.contextmanager
def lending(tensors):
    """Engines deserialized in this context may read `tensors` instead of copying equal weights."""
    token = _LENT.set(tuple(t.detach() for t in tensors))
    try:
        yield
    finally:
        _LENT.reset(token)


def is_lent(tensor):
    """Whether `tensor` lies in the memory of a tensor lent to the engines being deserialized."""
    address = tensor.untyped_storage().data_ptr()
    return any(t.untyped_storage().data_ptr() == address for t in _LENT.get() if t.device == tensor.device)


def device_weights(weights, device):
    """name -> the plan's weight `weights[name]` (a host tensor) on `device`: a lent tensor with its dtype, size and
    bytes, viewed with its shape, where one is lent, else a copy (none on the host: the plan's memory)."""
    lent = _LENT.get()
    if not lent:
        return {name: weight.to(device) for name, weight in weights.items()}
    home = _indexed(device)
    index = _by_probe([t for t in lent if _plain(t) and t.device == home and t.is_contiguous() and t.numel()])
    placed, read = {}, []
    for name, weight in weights.items():
        candidates = index.get(_key(weight, _bytes(weight)[:_PROBE_BYTES]), ()) if weight.numel() else ()
        # compared on the host: a device copy of each weight, even one at a time, would raise the device's peak
        match = next((t for t in candidates if torch.equal(_bytes(t).cpu(), _bytes(weight))), None)
        placed[name] = weight.to(device) if match is None else match.view(weight.shape)
        if match is not None:
            read.append(weight)
    logger.info("reference engine: %d of its %d weights (%.1f of %.1f MiB) are lent tensors, read in place",
                len(read), len(weights), _mib(read), _mib(weights.values()))
    return placed


def _mib(tensors):
    return sum(t.nbytes for t in tensors) / 2 ** 20


def _plain(tensor):
    """Whether `tensor` is a plain strided tensor, whose memory can be read as bytes (not sparse, quantized or a
    subclass)."""
    return type(tensor) is torch.Tensor and tensor.layout == torch.strided and not tensor.is_quantized


def _by_probe(tensors):
    """{(dtype, numel, leading bytes): [tensors]}, the leading bytes read back from the device in one copy."""
    probes = torch.cat([_bytes(t)[:_PROBE_BYTES] for t in tensors]).cpu() if tensors else None
    index, start = {}, 0
    for tensor in tensors:
        size = min(_PROBE_BYTES, tensor.nbytes)
        index.setdefault(_key(tensor, probes[start:start + size]), []).append(tensor)
        start += size
    return index


def _key(tensor, probe):
    """The index key of a lent tensor or a weight: dtype, element count, leading bytes (`probe`, on the host)."""
    return tensor.dtype, tensor.numel(), probe.numpy().tobytes()


def _bytes(tensor):
    """A contiguous tensor's memory as a flat uint8 tensor (compared bytewise: -0.0 is not 0.0, NaN is itself)."""
    return tensor.reshape(-1).view(torch.uint8)


def _indexed(device):
    """`device` with its index: "cuda" means the current CUDA device (engines load under their device's guard)."""
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device
