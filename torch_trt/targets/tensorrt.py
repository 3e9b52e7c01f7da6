"""The real TensorRT: lazy import, version check, and what only real TensorRT has.

Converters and the runtime use the `tensorrt` module exactly as they use the reference. What the
reference does not model lives here, written against the same API: a logger that maps
TensorRT's severities onto Python logging, a progress monitor logging build phases at INFO,
a timing cache kept on disk (per TensorRT version and GPU model, under the user's cache dir), the
engine inspector's report for `debug=True`, and the supported versions (MINIMUM_VERSION and up). Every
TensorRT name used here is checked against `tensorrt_api.json` (the 11.4 bindings' manifest)
by tests/targets/test_tensorrt.py.
"""

import functools
import importlib.resources
import json
import logging
import os
import re

from ..errors import TorchTRTError

logger = logging.getLogger(__name__)

# Every slice sets ISliceLayer.axes, which TensorRT has from 10.3; API added later (the manifest's
# `changed_since_10`) fails the conformance check, so nothing newer than this is used.
MINIMUM_VERSION = (10, 3)
MAXIMUM_MAJOR_VERSION = 11
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
    """Raise TorchTRTError unless `version` ("11.4.0.106") is in [MINIMUM_VERSION, next major after 11); return it."""
    match = re.match(r"(\d+)\.(\d+)", str(version))
    parsed = (int(match.group(1)), int(match.group(2))) if match else None
    if parsed is None or not MINIMUM_VERSION <= parsed or parsed[0] > MAXIMUM_MAJOR_VERSION:
        minimum = ".".join(map(str, MINIMUM_VERSION))
        raise TorchTRTError(f"TensorRT {version} is not supported; torch_trt needs TensorRT {minimum} to "
                            f"{MAXIMUM_MAJOR_VERSION}.x (checked against the {MANIFEST_VERSION} bindings): pip install "
                            f"'tensorrt>={minimum},<{MAXIMUM_MAJOR_VERSION + 1}' --extra-index-url "
                            "https://pypi.nvidia.com, or use target='reference'")
    return parsed


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
    """Write the config's timing cache (grown by the build) to `path`, creating its directory; replace atomically."""
    cache = config.get_timing_cache()
    if cache is not None and path:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        partial = f"{path}.{os.getpid()}.tmp"  # concurrent builds never leave a torn file
        with open(partial, "wb") as file:
            file.write(bytes(cache.serialize()))
        os.replace(partial, path)


def timing_cache_path(trt, device_name):
    """Where the timing cache of this TensorRT version on this GPU model lives: the user's cache dir."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    gpu = re.sub(r"[^A-Za-z0-9.-]+", "_", device_name)
    return os.path.join(root, "torch_trt", f"timing-trt{trt.__version__}-{gpu}.cache")


def configure_builder(trt, config, debug=False, timing_cache_path=None):
    """TensorRT-only build options: phase logging when INFO is shown, detailed profiling for debug, a timing cache."""
    if logger.isEnabledFor(logging.INFO):  # each phase callback takes the GIL during the build: only when shown
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
