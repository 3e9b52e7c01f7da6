"""The API conformance plugin: record each test's use of the network API and check it against TensorRT's bindings.

Each test runs with the pipeline's `resolve_target` wrapped (recorder.install) for that test only,
recording into one session Recorder; between tests, and in tests marked `unrecorded`, the pipeline
runs on the target's own objects. conformance/test_conformance.py::test_pipeline_uses_only_real_tensorrt_api
checks the records and is moved to run last; when a selection (-k, a path) leaves it out,
pytest_sessionfinish runs the same check and fails the session, printing the report in the terminal
summary. TORCH_TRT_API_USES=FILE lists every recorded use in FILE.
"""

import os

import pytest

from .manifest import Manifest
from .recorder import Recorder, install, recording, report, violations

FINAL_CHECK = "test_pipeline_uses_only_real_tensorrt_api"


class ApiConformance:
    """The session's Recorder, filled test by test, and the check of what it holds."""

    def __init__(self):
        self.recorder = Recorder()
        self.report = []

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "unrecorded: run the pipeline on the target's own objects, without the "
                                           "API recorder's proxies")

    def pytest_collection_modifyitems(self, items):
        """Run the conformance check after every other test, whatever the collection order."""
        final = [item for item in items if item.name == FINAL_CHECK]
        items[:] = [item for item in items if item.name != FINAL_CHECK] + final

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item):
        if item.get_closest_marker("unrecorded"):
            yield
            return
        uninstall = install()
        try:
            with recording(self.recorder):
                yield
        finally:
            uninstall()

    def pytest_sessionfinish(self, session, exitstatus):
        records = self.recorder.records
        if os.environ.get("TORCH_TRT_API_USES"):  # a file to list every recorded use in, for inspection
            with open(os.environ["TORCH_TRT_API_USES"], "w") as file:
                file.writelines(f"{key} {where}\n" for key, where in sorted(records.items(), key=str))
        if self.recorder.checked or not records or exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        manifest = Manifest()
        found = violations(self.recorder, manifest)
        if found:
            self.report.append(report(found, manifest))
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        for text in self.report:
            terminalreporter.section("TensorRT API conformance", red=True)
            terminalreporter.write_line(text)
