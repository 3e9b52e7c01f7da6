"""Every example runs to completion in a fresh process and prints what it shows."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))
EXPECTED = {"quickstart.py": "max abs error vs eager", "torch_compile_backend.py": "engines built: 1",
            "fallback_report.py": "fallbacks by reason: no converter: 1"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert EXPECTED[path.name] in result.stdout
