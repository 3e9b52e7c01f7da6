"""The converter suite runs every registered converter schema at least once (see tests/schema_coverage.py)."""

import pytest


def test_every_converter_schema_ran(pytestconfig):
    """Runs last: every converter schema ran in a test of tests/converters; only a whole-suite run can tell."""
    coverage = pytestconfig.pluginmanager.get_plugin("schema-coverage")
    incomplete = coverage.why_incomplete()
    if incomplete:
        coverage.verdict = f"not checked: not the whole converter suite: {incomplete}"
        pytest.skip(coverage.verdict)
    not_run = coverage.converters_not_run()
    total = len(coverage.registry.CONVERTERS)
    coverage.verdict = (f"FAILED: {len(not_run)} of {total} converter schemas never ran in tests/converters: "
                        f"{', '.join(not_run)}" if not_run else f"checked: all {total} converter schemas ran")
    assert not not_run, coverage.verdict + "\nAdd a case to tests/converters/test_<family>.py that runs each."
