"""The real TensorRT: imported lazily, with a version check."""

import functools

SUPPORTED_MAJOR_VERSIONS = (10, 11)


@functools.lru_cache(maxsize=None)
def load():
    """The `tensorrt` module, or None when it cannot be imported; error on an unsupported version."""
    try:
        import tensorrt
    except ImportError:
        return None
    major = int(tensorrt.__version__.split(".")[0])
    if major not in SUPPORTED_MAJOR_VERSIONS:
        from ..errors import TorchTRTError

        raise TorchTRTError(f"TensorRT {tensorrt.__version__} is not supported; torch_trt needs TensorRT "
                            f"{' or '.join(map(str, SUPPORTED_MAJOR_VERSIONS))}.x")
    return tensorrt
