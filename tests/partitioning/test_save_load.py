"""Partitioned modules survive torch.jit.save and torch.jit.load in a fresh process that imports torch_trt."""

import os
import sys
import zipfile
from pathlib import Path

import torch

from test_segments import ListAndTuple, LongInput
from conformance.recorded_run import run_recorded

TESTS = str(Path(__file__).parents[1])  # the fresh process needs tests/opaque_op.py's op, as a user needs their own
FRESH = {**os.environ, "PYTHONPATH": TESTS + os.pathsep + os.environ.get("PYTHONPATH", "")}

LOAD = """
import sys, torch, torch_trt, opaque_op
for prefix in sys.argv[1:]:
    module = torch.jit.load(prefix + ".ts")
    inputs, engines, expected = torch.load(prefix + ".pt")
    assert str(module.graph).count("torch_trt::execute_engine(") == engines, module.graph
    actual = module(*inputs)
    assert repr(actual) == repr(expected), (actual, expected)
print("ok")
"""

CASES = [  # module, inputs, segments, settings
    (ListAndTuple(), [torch.randn(3, 4)], "ETE", {}),  # list, tuple and int outputs
    (LongInput(), [torch.randn(3, 4), torch.randint(0, 5, (3, 4))], "E", {"truncate_long_and_double": True}),
]


def test_round_trip_in_a_fresh_process(tmp_path, check_partition):
    prefixes = []
    for index, (module, inputs, kinds, settings) in enumerate(CASES):
        compiled = check_partition(module, inputs, kinds, **settings)[0]
        prefix = str(tmp_path / f"m{index}")
        torch.jit.save(compiled, prefix + ".ts")
        torch.save((inputs, kinds.count("E"), compiled(*[t.clone() for t in inputs])), prefix + ".pt")
        prefixes.append(prefix)
    result = run_recorded(LOAD, *prefixes, capture_output=True, text=True, timeout=300,
                            env=FRESH)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def _zero_half_of_the_engine(path):
    """Rewrite the saved zip with the first half of its largest tensor record (the engine blob) zeroed; fresh CRCs."""
    with zipfile.ZipFile(path) as archive:
        records = {info.filename: archive.read(info) for info in archive.infolist()}
    engine = max(records, key=lambda name: len(records[name]))
    blob = records[engine]
    records[engine] = bytes(len(blob) // 2) + blob[len(blob) // 2:]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in records.items():
            archive.writestr(name, data)


def test_a_corrupted_engine_is_refused_on_load(tmp_path, check_partition):
    compiled = check_partition(ListAndTuple(), [torch.randn(3, 4)], "ETE")[0]
    path = str(tmp_path / "corrupted.ts")
    torch.jit.save(compiled, path)
    _zero_half_of_the_engine(path)
    script = f"import torch, torch_trt, opaque_op; torch.jit.load({path!r})(torch.randn(3, 4))"
    result = run_recorded(script, capture_output=True, text=True, timeout=300, env=FRESH)
    assert result.returncode != 0 and "do not match its id" in result.stderr, result.stderr[-2000:]
