"""The real TensorRT: lazy import, version check, and what only real TensorRT has.

Converters and the runtime use the `tensorrt` module exactly as they use the reference. What the
reference does not model lives here, written against the same API: a logger that maps
TensorRT's severities onto Python logging, a progress monitor logging build phases at INFO,
a timing cache kept on disk, and the engine inspector's report for `debug=True`. Every
TensorRT name used here is checked against `tensorrt_api.json` (the 11.4 bindings' manifest)
by tests/targets/test_tensorrt.py.
"""

import functools
import importlib.resources
import json
import logging
import os

from ..errors import TorchTRTError

logger = logging.getLogger(__name__)

SUPPORTED_MAJOR_VERSIONS = (10, 11)
MANIFEST_VERSION = "11.4.0.106"  # the bindings `tensorrt_api.json` was read from


@functools.lru_cache(maxsize=None)
def load():
    """The `tensorrt` module, or None when it cannot be imported; error on an unsupported version."""
    try:
        import tensorrt
    except ImportError:
        return None
    check_version(tensorrt.__version__)
    return tensorrt


def check_version(version):
    """Raise TorchTRTError unless `version` ("11.4.0.106") is a TensorRT major version torch_trt supports."""
    try:
        major = int(str(version).split(".")[0])
    except ValueError:
        major = None
    if major not in SUPPORTED_MAJOR_VERSIONS:
        supported = " or ".join(f"{v}.x" for v in SUPPORTED_MAJOR_VERSIONS)
        raise TorchTRTError(f"TensorRT {version} is not supported; torch_trt needs TensorRT {supported} (checked "
                            f"against the {MANIFEST_VERSION} bindings): pip install 'tensorrt>=10,<12' "
                            "--extra-index-url https://pypi.nvidia.com, or use target='reference'")
    return major


@functools.lru_cache(maxsize=None)
def api_manifest():
    """The vendored manifest of TensorRT's Python bindings: classes, argument names, attributes, enums, quirks."""
    text = importlib.resources.files(__package__).joinpath("tensorrt_api.json").read_text()
    return json.loads(text)


def progress_monitor(trt, log=logger):
    """An IProgressMonitor logging each build phase at INFO: start (with its parent) and finish, never cancelling."""

    class PhaseLogger(trt.IProgressMonitor):
        def __init__(self):
            trt.IProgressMonitor.__init__(self)

        def phase_start(self, phase_name, parent_phase, num_steps):
            parent = f" (in {parent_phase})" if parent_phase else ""
            log.info("TensorRT build phase %s%s: %d steps", phase_name, parent, num_steps)

        def step_complete(self, phase_name, step):
            return True

        def phase_finish(self, phase_name):
            log.info("TensorRT build phase %s finished", phase_name)

    return PhaseLogger()


def use_timing_cache(config, path):
    """Give `config` the timing cache stored at `path` (an empty one when the file is missing); return the cache."""
    data = b""
    if path and os.path.exists(path):
        with open(path, "rb") as file:
            data = file.read()
    cache = config.create_timing_cache(data)
    config.set_timing_cache(cache, False)
    return cache


def save_timing_cache(config, path):
    """Write the config's timing cache (grown by the build) to `path`."""
    cache = config.get_timing_cache()
    if cache is not None and path:
        with open(path, "wb") as file:
            file.write(bytes(cache.serialize()))


def configure_builder(trt, config, debug=False, timing_cache_path=None):
    """TensorRT-only build options: phase logging, detailed profiling for debug, a timing cache on disk."""
    config.progress_monitor = progress_monitor(trt)
    if debug:
        config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    if timing_cache_path:
        use_timing_cache(config, timing_cache_path)
    return config


def engine_report(trt, engine, context=None):
    """The engine inspector's JSON description of the engine's layers (detailed when built with debug)."""
    inspector = engine.create_engine_inspector()
    if context is not None:
        inspector.execution_context = context
    return inspector.get_engine_information(trt.LayerInformationFormat.JSON)
