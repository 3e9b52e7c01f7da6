"""Shared fixtures (the devices every accuracy test runs on: CPU always, CUDA when present) and the test plugins.

conformance/plugin.py records each test's use of the network API and checks it against TensorRT's
bindings; schema_coverage.py checks that the converter suite runs every registered converter schema.
"""

import random
import zlib

import numpy
import pytest
import torch

import opaque_op  # noqa: F401  (registers torch.ops.torch_trt_test.opaque)
from conformance.plugin import ApiConformance
from torch_trt.backend import engine_cache

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True)
def seeded_random(request):
    """Random inputs drawn from a seed of the test's own id, so a failure repeats on the next run, in any order."""
    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def fresh_dynamo():
    """Dynamo's caches and torch_trt's engine cache cleared before and after the test."""
    torch._dynamo.reset()
    engine_cache.clear()
    yield
    torch._dynamo.reset()
    engine_cache.clear()


@pytest.fixture
def api_recorder(pytestconfig):
    """The session's Recorder of every network API use the pipeline makes (conformance/plugin.py)."""
    return pytestconfig.pluginmanager.get_plugin("api-conformance").recorder


def pytest_configure(config):
    """Register the API conformance check and the converter schema coverage check; run float32 convolutions in full
    precision, in eager and in engines (which follow cuDNN's TF32 switch, on by default), as the suite's float32
    tolerances assume."""
    from schema_coverage import SchemaCoverage

    torch.backends.cudnn.allow_tf32 = False

    config.pluginmanager.register(ApiConformance(), "api-conformance")
    config.pluginmanager.register(SchemaCoverage(), "schema-coverage")
