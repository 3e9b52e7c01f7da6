"""The benchmarks' own arithmetic and argument checks: python -m pytest benchmarks -q (not part of tests/)."""

import argparse
import datetime
import os

import pytest
import torch

import latency
import measure
import memory
import report


def _row(backend, median_ms):
    return {"backend": backend, "median_ms": median_ms}


def test_percentile_is_nearest_rank():
    values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]
    assert measure.percentile(values, 0.9) == 9
    assert measure.percentile(values, 0.5) == 5
    assert measure.percentile([7], 0.9) == 7


def test_ratio_to_best_inductor_waits_for_every_inductor_mode():
    inductors = ["inductor", "inductor-reduce-overhead"]
    group = [_row("eager", 8.0), _row("inductor", 4.0)]
    report.add_ratios(group[-1], group, inductors)
    assert group[-1]["vs_eager"] == 2.0
    assert group[-1]["vs_best_inductor"] is None  # reduce-overhead has not run yet
    group += [_row("inductor-reduce-overhead", None), _row("torch_trt", 2.0)]  # reduce-overhead failed
    report.add_ratios(group[-1], group, inductors)
    assert (group[-1]["vs_eager"], group[-1]["vs_best_inductor"]) == (4.0, 2.0)


def test_failed_row_has_no_ratios():
    group = [_row("eager", 8.0), _row("torch_trt", None)]
    report.add_ratios(group[-1], group, [])
    assert group[-1]["vs_eager"] is None and group[-1]["vs_best_inductor"] is None


def test_results_path_slugs_the_device_name():
    path = report.results_path("latency", "NVIDIA H100 80GB HBM3", datetime.datetime(2025, 3, 4, 5, 6, 7), "out")
    assert str(path) == "out/latency-nvidia-h100-80gb-hbm3-2025-03-04-050607.json"


def test_a_pipe_in_the_note_does_not_split_the_markdown_cells():
    row = dict(label="BERT", batch=1, dtype="float16", backend="torch_trt", median_ms=None, p90_ms=None,
               vs_eager=None, vs_best_inductor=None, compile_s=None, peak_mib=None, serving_mib=None,
               max_abs_error=None, note="a | b")
    assert report.markdown_row(row).count("|") == len(report.COLUMNS) + 1


@pytest.mark.parametrize("text,message", [("{x", "not valid JSON"), ("[1]", "must be a JSON object")])
def test_trt_options_must_be_a_json_object(text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        latency._json_object(text)


def test_cpu_latencies_count_the_iterations():
    calls = []
    times = measure.latencies_ms(lambda x: calls.append(x), (1,), iterations=5, warmup=2, device=torch.device("cpu"))
    assert len(times) == 5 and len(calls) == 7


def test_compile_stages_name_functions_that_exist():
    import importlib

    import compile_stages
    for module_name, name in compile_stages.STAGES:
        assert callable(getattr(importlib.import_module(module_name), name)), f"{module_name}.{name}"


def test_compile_times_start_from_an_empty_inductor_cache_unless_one_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "restored after the test")
    fresh = measure.use_inductor_cache()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == fresh and not os.listdir(fresh)
    assert measure.use_inductor_cache(str(tmp_path)) == str(tmp_path) == os.environ["TORCHINDUCTOR_CACHE_DIR"]


def _frame(filename, line, name="f"):
    return {"filename": filename, "line": line, "name": name}


_ENGINE = [_frame("/x/torch/cuda/memory.py", 1), _frame("/repo/torch_trt/targets/reference/engine.py", 56, "__init__"),
           _frame("/repo/torch_trt/runtime/engine_manager.py", 106, "__init__"), _frame("/repo/run.py", 9)]
_INDUCTOR = [_frame("/x/torch/_inductor/select_algorithm.py", 3), _frame("/repo/run.py", 9, "main")]


def test_the_memory_peak_is_the_most_live_at_once_and_counts_frees_of_earlier_blocks():
    trace = [
        {"action": "free_completed", "addr": 7, "size": 50, "frames": []},  # allocated before the recording
        {"action": "alloc", "addr": 1, "size": 100, "frames": _ENGINE},
        {"action": "alloc", "addr": 2, "size": 30, "frames": _INDUCTOR},
        {"action": "free_completed", "addr": 2, "size": 30, "frames": _INDUCTOR},
        {"action": "alloc", "addr": 3, "size": 70, "frames": _INDUCTOR},
        {"action": "alloc", "addr": 4, "size": 20, "frames": []},
    ]
    peak, live = memory.live_at_peak(trace)
    assert peak == 100 + 70 + 20 - 50 and sorted(live) == [1, 3, 4]
    assert memory.by_owner(live) == {"targets/reference/engine.py:56 __init__": 100, "run.py:9 main": 70,
                                     "PyTorch": 20}


def test_an_allocating_line_breaks_down_by_its_innermost_frames():
    """--frames: under an allocating line, its bytes by the innermost Python frames, PyTorch's included."""
    graph_call = [_frame("/x/torch/_ops.py", 865, "__call__"), _frame("/tmp/generated.py", 790, "call"),
                  _frame("/repo/torch_trt/targets/reference/program.py", 96, "run")]
    benchmark = [_frame("/x/torch/_ops.py", 865, "__call__"), _frame("/x/benchmarking.py", 383, "benchmark_gpu"),
                 _frame("/repo/torch_trt/targets/reference/program.py", 96, "run")]
    live = {1: (30, graph_call), 2: (50, benchmark), 3: (20, graph_call), 4: (100, _ENGINE)}
    assert memory.by_innermost(live, "targets/reference/program.py:96 run", 2) == {
        "_ops.py:865 __call__ < generated.py:790 call": 50, "_ops.py:865 __call__ < benchmarking.py:383 benchmark_gpu": 50}


def test_a_trace_as_long_as_the_profiler_keeps_may_have_lost_its_first_events():
    trace = [{"action": "alloc", "addr": i, "size": 1, "frames": []} for i in range(3)]
    assert memory.truncated(trace, 3) and not memory.truncated(trace, 4)


def test_memory_peaks_are_none_on_the_cpu():
    peaks = measure.MemoryPeaks(torch.device("cpu"))
    peaks.restart()
    assert peaks.mib() == (None, None)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA memory statistics need a GPU")
def test_memory_peaks_keep_the_whole_span_and_the_span_since_the_restart():
    device = torch.device("cuda")
    peaks = measure.MemoryPeaks(device)
    transient = torch.empty(8 * 2**20, dtype=torch.uint8, device=device)
    del transient
    kept = torch.empty(2 * 2**20, dtype=torch.uint8, device=device)
    peaks.restart()
    serving = torch.empty(2**20, dtype=torch.uint8, device=device)
    del serving
    whole, since_restart = peaks.mib()
    assert whole == pytest.approx(8) and since_restart == pytest.approx(3)
    del kept


@pytest.mark.skipif(not torch.cuda.is_available(), reason="cuBLAS workspaces need a GPU")
def test_freeing_memory_drops_the_cublas_workspaces():
    device = torch.device("cuda")
    measure.free_memory(device)
    before = torch.cuda.memory_allocated(device)
    with torch.cuda.stream(torch.cuda.Stream(device)):
        a = torch.randn(64, 64, device=device)
        a @ a  # a matrix product on a new stream: cuBLAS makes it a workspace
        del a
    torch.cuda.synchronize(device)
    assert torch.cuda.memory_allocated(device) > before
    measure.free_memory(device)
    assert torch.cuda.memory_allocated(device) == before
