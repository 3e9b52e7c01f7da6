"""The network API implementations, selected by name: real `tensorrt`, or the PyTorch `reference`.

Everything in torch_trt builds and runs networks through the module `resolve_target` returns,
so the same code path serves both targets.
"""

import contextlib
import functools
import logging

import torch

from ..errors import TorchTRTError

logger = logging.getLogger(__name__)


def tensorrt_available():
    """True when `tensorrt` imports and CUDA is present."""
    from . import tensorrt

    return tensorrt.load() is not None and torch.cuda.is_available()


@functools.lru_cache(maxsize=None)
def resolve_target(name, device=None):
    """The API module for "auto", "tensorrt" or "reference" running engines on `device` (a torch.device or None).

    TensorRT runs engines on CUDA devices only: "auto" with a CPU device is the reference, "tensorrt" with
    one is an error. Warns once when auto falls back.
    """
    on_cpu = device is not None and torch.device(device).type != "cuda"
    if name == "reference":
        from . import reference

        return reference
    if name == "tensorrt" and on_cpu:
        raise TorchTRTError(f"target='tensorrt' runs engines on CUDA devices only, but the device is {device}; pass "
                            "device='cuda' (and CUDA inputs), or target='reference' to run on the CPU")
    if name == "tensorrt":
        from . import tensorrt

        module = tensorrt.load()
        if module is None:
            raise TorchTRTError("target='tensorrt' but `import tensorrt` failed; install it from NVIDIA's index "
                                "(pip install tensorrt --extra-index-url https://pypi.nvidia.com) or use "
                                "target='reference'")
        return module
    if name == "auto":
        if on_cpu:
            return resolve_target("reference")
        if tensorrt_available():
            return resolve_target("tensorrt")
        logger.warning("TensorRT is not available (needs `tensorrt` and CUDA); using the PyTorch reference target")
        return resolve_target("reference")
    raise ValueError(f"unknown target {name!r}; use 'auto', 'tensorrt' or 'reference'")


def target_name(module):
    """The name under which `module` was resolved ("tensorrt" or "reference")."""
    return "reference" if module.__name__.endswith(".reference") else "tensorrt"


def device_guard(device):
    """`torch.cuda.device(device)` for a CUDA device (engines are built, loaded and run on theirs), else nothing."""
    device = torch.device(device)
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


def lending(trt, tensors):
    """A context in which the engines `trt` deserializes may read `tensors` in place of equal weights
    (reference/lending.py); TensorRT copies every weight into its engine, so for it nothing is lent."""
    if target_name(trt) != "reference":
        return contextlib.nullcontext()
    from .reference.lending import lending as reference_lending

    return reference_lending(tensors)


def start_code_generation(trt, device, optimization_level):
    """Start what the engines `trt` builds for `device` will need to generate their code (the reference target's
    inductor workers; reference/program.py), so that it starts while the pipeline runs; TensorRT needs nothing."""
    if target_name(trt) == "reference":
        from .reference.program import start_code_generation as reference_start

        reference_start(torch.device(device), optimization_level)
