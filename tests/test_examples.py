"""Every example runs to completion in a fresh process, prints what it shows, its printed errors are small, and
the network API it used there is TensorRT's (conformance/recorded_run.py records it in that process)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from conformance.manifest import Manifest
from conformance.recorded_run import load_records
from conformance.recorder import report, violations

RECORDED_RUN = pathlib.Path(__file__).parent / "conformance" / "recorded_run.py"
EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))
EXPECTED = {"quickstart.py": "max abs error vs eager", "torch_compile_backend.py": "engines built: 1",
            "fallback_report.py": "fallbacks by reason: no converter: 1"}
ERRORS_PRINTED = {"quickstart.py": 2, "torch_compile_backend.py": 3, "fallback_report.py": 1}  # one per model/batch
MAX_ABS_ERROR = 1e-4  # float32 models: the converter tests' float32 tolerance
ERROR_FIGURE = re.compile(r"max abs error vs eager(?: at batch \d+)?:?\s+(\S+)")


def printed_errors(stdout):
    """Every 'max abs error vs eager ... <number>' figure printed, as floats."""
    return [float(figure) for figure in ERROR_FIGURE.findall(stdout)]


def test_printed_errors_are_parsed():
    text = "  max abs error vs eager: 1.49e-07\nmax abs error vs eager at batch 5: 2.98e-07\n" \
           "batch  7: max abs error vs eager 7.15e-07\nmax abs error vs eager: nan"
    errors = printed_errors(text)
    assert errors[:3] == [1.49e-07, 2.98e-07, 7.15e-07] and errors[3] != errors[3]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    records = tmp_path / "api_uses.pickle"
    # float32 in full precision on a GPU too, as the tolerance assumes: cuDNN runs eager convolutions in TF32 by
    # default, and so do engines of convolutional networks (conversion/build.py)
    result = subprocess.run([sys.executable, str(RECORDED_RUN), str(records), str(path)], capture_output=True,
                            text=True, timeout=600, env={**os.environ, "NVIDIA_TF32_OVERRIDE": "0"})
    assert result.returncode == 0, result.stderr[-3000:]
    recorder, manifest = load_records(records), Manifest()
    assert recorder.records, "the recorded run saw no use of the network API"
    found = violations(recorder, manifest)
    assert not found, report(found, manifest)
    assert EXPECTED[path.name] in result.stdout
    errors = printed_errors(result.stdout)
    assert len(errors) == ERRORS_PRINTED[path.name], f"expected {ERRORS_PRINTED[path.name]} error figures:\n" \
                                                     f"{result.stdout}"
    assert all(error < MAX_ABS_ERROR for error in errors), \
        f"max abs error above {MAX_ABS_ERROR}: {errors}\n{result.stdout}"
