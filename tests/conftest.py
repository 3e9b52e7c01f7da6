"""Shared fixtures: the devices every accuracy test runs on (CPU always, CUDA when present), and the API recorder.

Every test runs with the pipeline's use of the network API recorded (conformance/recorder.py).
The uses are checked against TensorRT's bindings manifest by
conformance/test_conformance.py::test_pipeline_uses_only_real_tensorrt_api, which is moved to
run last; when a selection (-k, a path) leaves it out, pytest_sessionfinish runs the same check
on whatever was recorded and fails the session, printing the report in the terminal summary.
TORCH_TRT_API_USES=FILE lists every recorded use in FILE.
"""

import os

import pytest
import torch

import opaque_op  # noqa: F401  (registers torch.ops.torch_trt_test.opaque)
from conformance.manifest import Manifest
from conformance.recorder import Recorder, install, recording, report, violations
from torch_trt.backend import engine_cache

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
FINAL_CHECK = "test_pipeline_uses_only_real_tensorrt_api"

_SESSION = Recorder()
_REPORT = []


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


@pytest.fixture(scope="session", autouse=True)
def api_recorder():
    """The session's Recorder of every network API use the pipeline makes."""
    uninstall = install()
    try:
        with recording(_SESSION):
            yield _SESSION
    finally:
        uninstall()


def pytest_collection_modifyitems(session, config, items):
    """Run the conformance check after every other test, whatever the collection order."""
    final = [item for item in items if item.name == FINAL_CHECK]
    items[:] = [item for item in items if item.name != FINAL_CHECK] + final


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("TORCH_TRT_API_USES"):  # a file to list every recorded use in, for inspection
        with open(os.environ["TORCH_TRT_API_USES"], "w") as file:
            file.writelines(f"{key} {where}\n" for key, where in sorted(_SESSION.records.items(), key=str))
    if _SESSION.checked or not _SESSION.records or exitstatus == pytest.ExitCode.INTERRUPTED:
        return
    manifest = Manifest()
    found = violations(_SESSION, manifest)
    if found:
        _REPORT.append(report(found, manifest))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    for text in _REPORT:
        terminalreporter.section("TensorRT API conformance", red=True)
        terminalreporter.write_line(text)


def pytest_configure(config):
    """Register the converter schema coverage check (schema_coverage.py)."""
    from schema_coverage import SchemaCoverage

    config.pluginmanager.register(SchemaCoverage(), "schema-coverage")
