"""The network API implementations, selected by name: real `tensorrt`, or the PyTorch `reference`.

Everything in torch_trt builds and runs networks through the module `resolve_target` returns,
so the same code path serves both targets.
"""

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
def resolve_target(name):
    """The API module for "auto", "tensorrt" or "reference"; warns once when auto falls back."""
    if name == "reference":
        from . import reference

        return reference
    if name == "tensorrt":
        from . import tensorrt

        module = tensorrt.load()
        if module is None:
            raise TorchTRTError("target='tensorrt' but `import tensorrt` failed; install it from NVIDIA's index "
                                "(pip install tensorrt --extra-index-url https://pypi.nvidia.com) or use "
                                "target='reference'")
        return module
    if name == "auto":
        if tensorrt_available():
            return resolve_target("tensorrt")
        logger.warning("TensorRT is not available (needs `tensorrt` and CUDA); using the PyTorch reference target")
        return resolve_target("reference")
    raise ValueError(f"unknown target {name!r}; use 'auto', 'tensorrt' or 'reference'")


def target_name(module):
    """The name under which `module` was resolved ("tensorrt" or "reference")."""
    return "reference" if module.__name__.endswith(".reference") else "tensorrt"
