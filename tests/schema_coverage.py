"""Schema coverage: a full run of the converter suite must run every registered converter schema.

The plugin wraps every registration of the converter and evaluator registries for the session,
so each conversion that returns records its schema key: converters while a test of
tests/converters runs (the suite that compares each converter with eager), evaluators in any test.
tests/converters/test_schema_coverage.py::test_every_converter_schema_ran runs last and fails
naming each converter schema that never ran. The check needs the whole suite: when a selection
(a file, a node id, -k, --lf, --deselect) leaves converter tests out, or one did not run, the test is
skipped with that reason. Either way the terminal summary says what was checked, the converter
schemas not run, and, for information while evaluators are reworked, the evaluators that never ran.
"""

import dataclasses
import functools
import pathlib

import pytest

SUITE = pathlib.Path(__file__).parent / "converters"
FINAL_CHECK = "test_every_converter_schema_ran"


def _name(key):
    """'aten::div.Scalar' for a (name, overload) key, the kind itself for a kind key."""
    if isinstance(key, str):
        return key
    return f"{key[0]}.{key[1]}" if key[1] else key[0]


class SchemaCoverage:
    """Which registered converter and evaluator schemas ran, and whether the converter suite ran whole."""

    def __init__(self):
        self.converters_ran, self.evaluators_ran = set(), set()
        self.narrowed = []  # why the selection is not the whole converter suite
        self.suite_items, self.suite_ran = set(), set()
        self.in_suite = False
        self.verdict = None  # what the final check found, for the summary

    # -- recording ------------------------------------------------------------------------------------------------

    def install(self):
        """Wrap every registration so a call that returns records its key."""
        from torch_trt.conversion import registry

        self.registry = registry
        for table, ran, only_in_suite in ((registry.CONVERTERS, self.converters_ran, True),
                                          (registry.EVALUATORS, self.evaluators_ran, False)):
            for key, registration in table.items():
                recording = self._recording(key, registration.function, ran, only_in_suite)
                table[key] = dataclasses.replace(registration, function=recording)

    def _recording(self, key, function, ran, only_in_suite):
        @functools.wraps(function)
        def record(ctx, node, args):
            result = function(ctx, node, args)
            if self.in_suite or not only_in_suite:
                ran.add(key)
            return result

        return record

    # -- pytest hooks ---------------------------------------------------------------------------------------------

    def pytest_configure(self, config):
        self.install()
        narrowing = [a for a in config.args if "::" in a and _in_suite(a.split("::")[0], config)]
        if narrowing:
            self.narrowed.append(f"node ids select part of the converter suite ({', '.join(narrowing)})")

    def pytest_deselected(self, items):
        left_out = [item.nodeid for item in items if _is_suite_item(item)]
        if left_out:
            self.narrowed.append(f"{len(left_out)} converter test(s) deselected, e.g. {left_out[0]}")

    def pytest_collection_modifyitems(self, items):
        final = [item for item in items if item.name == FINAL_CHECK]
        items[:] = [item for item in items if item.name != FINAL_CHECK] + final

    def pytest_collection_finish(self, session):
        files = {pathlib.Path(item.path) for item in session.items if _is_suite_item(item)}
        absent = sorted(p.name for p in SUITE.glob("test_*.py") if p not in files)
        if files and absent:
            self.narrowed.append(f"converter test files not collected: {', '.join(absent)}")
        self.suite_items = {item.nodeid for item in session.items if _is_suite_item(item) and item.name != FINAL_CHECK}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item):
        self.in_suite = _is_suite_item(item)
        yield
        self.in_suite = False

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.skipped:
            self.suite_ran.add(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter):
        if not self.suite_items:
            return
        write = terminalreporter.write_line
        failed = bool(self.verdict and self.verdict.startswith("FAILED"))
        terminalreporter.section("converter schema coverage", red=failed)
        write(self.verdict or f"not checked: {self.why_incomplete() or 'the final check did not run'}")
        not_run = self.converters_not_run()
        if not_run and not failed:
            write(f"{len(not_run)} of {len(self.registry.CONVERTERS)} converter schemas did not run in this "
                  f"selection: {', '.join(not_run)}")
        idle = sorted(_name(k) for k in set(self.registry.EVALUATORS) - self.evaluators_ran)
        write(f"evaluators (information only): {len(idle)} of {len(self.registry.EVALUATORS)} never ran in this "
              f"session: {', '.join(idle)}")

    # -- the check ------------------------------------------------------------------------------------------------

    def why_incomplete(self):
        """Why this run is not the whole converter suite, or '' when it is."""
        did_not_run = sorted(self.suite_items - self.suite_ran)
        reasons = self.narrowed + ([f"{len(did_not_run)} converter test(s) did not run, e.g. {did_not_run[0]}"]
                                   if did_not_run else [])
        return "; ".join(reasons)

    def converters_not_run(self):
        """The registered converter schemas no converter-suite test ran, by name."""
        return sorted(_name(k) for k in set(self.registry.CONVERTERS) - self.converters_ran)


def _is_suite_item(item):
    return SUITE in pathlib.Path(item.path).parents


def _in_suite(path, config):
    resolved = (pathlib.Path(config.invocation_params.dir) / path).resolve()
    return resolved == SUITE or SUITE in resolved.parents
