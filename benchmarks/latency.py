"""Latency of eager PyTorch, inductor and torch_trt on ResNet-50, BERT-base and ViT-B/16, all in one process.

Everything (3 models, batch 1 and 32, float16 and float32, 5 backends) on the GPU:

    python benchmarks/latency.py

A run can be limited, e.g. the float16 half of one model, or torch_trt with options against eager:

    python benchmarks/latency.py --models bert --dtype float16
    python benchmarks/latency.py --backends eager torch_trt --trt-options '{"min_block_size": 3}'

On a machine with a time limit per command, run a part per command with --output-dir, then merge the
JSON files into one chart with benchmarks/chart.py. CPU smoke run (tiny configurations of the same
architectures):

    python benchmarks/latency.py --tiny --models bert --batch 1 --dtype float32 --iterations 5 --warmup 1 \
        --backends eager torch_trt

For each (model, batch, dtype), each backend in turn (eager first, torch_trt last) gets a freshly loaded model
and is measured under torch.no_grad(): compile time (torch.compile and the first call; cold, since inductor's
on-disk caches start empty in a temporary directory unless --inductor-cache-dir names one), median and p90
latency over --iterations calls after --warmup calls (CUDA events, one call at a time; perf_counter on CPU),
peak memory of the row, weights and inputs included (torch.cuda.max_memory_allocated above what was allocated
before the model was loaded; memory, cuBLAS's workspaces included, is freed between rows), the same peak over
the timed calls alone ("serving": what the process holds once compiled and warmed up, without compile-time
transients), and the max abs error of its output against eager float32 with TF32 off (float16 outputs compared
in float32). Speedups are against eager and against the fastest inductor mode of the same (model, batch, dtype).
A backend that fails gets its error in the row's note and the run goes on; so does a graph torch_trt leaves to
PyTorch (its warning is the note). The table is printed as rows finish; the JSON, rewritten after each (model,
batch, dtype), and the PNG chart go to benchmarks/results/ (or --output-dir). Models whose library cannot be
imported (torchvision) are skipped with a note.
"""

import argparse
import contextlib
import functools
import json
import logging
import statistics
import sys
import traceback

import torch

import backends
import chart
import measure
import report
from workloads import WORKLOADS, WorkloadUnavailable, inputs_for, load

DTYPES = {"float16": torch.float16, "float32": torch.float32}
NOTE_LENGTH = 200  # characters of an error or warning kept in a row's note


def main():
    args = parse_args()
    rows = run(args)
    print(f"\n## All rows\n\n{report.header()}")
    print("\n".join(report.markdown_row(row) for row in rows), flush=True)


def parse_args():
    """The command line, with --trt-options parsed into a dict."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--batch", nargs="+", type=_positive_int, default=[1, 32])
    parser.add_argument("--dtype", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    parser.add_argument("--backends", nargs="+", default=list(backends.BACKENDS), choices=list(backends.BACKENDS))
    parser.add_argument("--iterations", type=_positive_int, default=200, help="timed calls per row")
    parser.add_argument("--warmup", type=_positive_int, default=20, help="untimed calls after the first one")
    parser.add_argument("--trt-options", type=_json_object, default={},
                        help="torch_trt options as a JSON object, e.g. '{\"min_block_size\": 3}'")
    parser.add_argument("--bert-attention", default="sdpa", choices=["sdpa", "eager"],
                        help="transformers' attn_implementation for BERT")
    parser.add_argument("--tiny", action="store_true", help="small configurations, for CPU smoke runs")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--output-dir", default=str(report.RESULTS_DIR), help="where the JSON and PNG go")
    parser.add_argument("--inductor-cache-dir", help="inductor's cache directory (default: a fresh temporary one)")
    return parser.parse_args()


def run(args):
    """Measure every selected (model, batch, dtype, backend); returns the rows, also written as JSON and a chart."""
    device = torch.device(args.device)
    args.inductor_cache_dir = measure.use_inductor_cache(args.inductor_cache_dir)
    selected = [name for name in backends.BACKENDS if name in args.backends]
    inductors = [name for name in backends.INDUCTOR_BACKENDS if name in selected]
    started = report.now()
    meta = _describe(args, device, started)
    path = report.results_path("latency", meta["device_name"], started, args.output_dir)
    print(f"{meta['device_name']}, torch {torch.__version__}; results: {path}", flush=True)
    rows = []
    with torch.no_grad():
        _warm_up_compilers(selected, args.trt_options, device)
        print(f"\n{report.header()}", flush=True)
        for name in args.models:
            try:
                workload = WORKLOADS[name](tiny=args.tiny, attention=args.bert_attention)
            except WorkloadUnavailable as error:
                print(f"skipping {name}: {error}", flush=True)
                continue
            for batch in args.batch:
                reference = _fp32_reference(workload, batch, device)
                for dtype in args.dtype:
                    group = []
                    for backend in selected:
                        group.append(measure_row(workload, name, batch, dtype, backend, reference, args, device))
                        report.add_ratios(group[-1], group, inductors)
                        print(report.markdown_row(group[-1]), flush=True)
                    for row in group:  # eager's and inductor's ratios to the best inductor mode are known now
                        report.add_ratios(row, group, inductors)
                    rows += group
                    report.write_json(path, meta, rows)
    _draw(rows, selected, meta, path)
    return rows


def measure_row(workload, name, batch, dtype, backend, reference, args, device):
    """One backend on one (model, batch, dtype): latency, compile time, peak memory, error; a failure is its note."""
    row = dict(model=name, label=workload.label, batch=batch, dtype=dtype, backend=backend, median_ms=None,
               p90_ms=None, compile_s=None, peak_mib=None, serving_mib=None, max_abs_error=None, note="")
    torch._dynamo.reset()
    try:
        with _torch_trt_warnings() as warnings:
            peaks = measure.MemoryPeaks(device)
            times, compile_s, output = _time_backend(workload, batch, DTYPES[dtype], backend, args, device, peaks)
        peak_mib, serving_mib = peaks.mib()
        row.update(median_ms=statistics.median(times), p90_ms=measure.percentile(times, 0.9), compile_s=compile_s,
                   peak_mib=peak_mib, serving_mib=serving_mib, max_abs_error=(output - reference).abs().max().item(),
                   note="; ".join(warnings))
    except Exception as error:  # a failing backend is a result of the benchmark, not the end of the run
        traceback.print_exc(file=sys.stderr)
        row["note"] = " ".join(f"{type(error).__name__}: {error}".split())[:NOTE_LENGTH]
    finally:
        torch._dynamo.reset()
        measure.free_memory(device)
    return row


def _time_backend(workload, batch, dtype, backend, args, device, peaks):
    """Load the model and time it: (latencies in ms, compile seconds or None for eager, an fp32 output on the CPU);
    `peaks` restarts after the warm-up, so its second span is the timed calls."""
    model = load(workload, device, dtype)
    inputs = inputs_for(workload, batch, device, dtype)
    if backend == "eager":
        function, compile_s = model, None
    else:
        make = functools.partial(backends.compile_for, model, backend, args.trt_options)
        function, compile_s = measure.timed_first_call(make, inputs, device)
    for _ in range(args.warmup):
        function(*inputs)
    peaks.restart()
    times = measure.latencies_ms(function, inputs, args.iterations, 0, device)
    return times, compile_s, function(*inputs).float().cpu()


def _fp32_reference(workload, batch, device):
    """Eager float32 output with TF32 off, on the CPU: what every row's max abs error is measured against."""
    model = load(workload, device, torch.float32)
    with _tf32_off():
        output = model(*inputs_for(workload, batch, device, torch.float32)).float().cpu()
    del model
    measure.free_memory(device)
    return output


@contextlib.contextmanager
def _tf32_off():
    """Matmuls and convolutions in full float32 inside the block."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@contextlib.contextmanager
def _torch_trt_warnings():
    """Collect torch_trt's warnings, e.g. a graph left to PyTorch, whose speed is then not torch_trt's."""
    messages = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage()[:NOTE_LENGTH])
    logger = logging.getLogger("torch_trt")
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


def _warm_up_compilers(selected, trt_options, device):
    """Compile a small module once per compiler, so imports and inductor's worker start-up count in no row."""
    module = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(6)]).to(device)
    example = torch.randn(2, 8, device=device)
    for backend in ("inductor", "torch_trt"):
        if not any(name.startswith(backend) for name in selected):
            continue
        try:
            backends.compile_for(module, backend, trt_options)(example)
        except Exception as error:  # the rows of this backend will show the error; the others still run
            print(f"warm-up of {backend} failed: {' '.join(str(error).split())}", flush=True)
        torch._dynamo.reset()


def _draw(rows, selected, meta, path):
    """The chart beside the JSON, or a note saying why there is none."""
    png = path.with_suffix(".png")
    if not rows:
        print("no rows measured: no chart")
    elif chart.draw(rows, selected, chart.title_of(meta), png):
        print(f"chart: {png}")
    else:
        print("matplotlib is not installed, so no chart (pip install matplotlib; then benchmarks/chart.py)")


def _describe(args, device, started):
    """The run's description for the JSON: versions, device, TF32 settings and the arguments."""
    return {"torch": torch.__version__, "cuda": torch.version.cuda, "device_name": measure.device_name(device),
            "date": started.isoformat(), "command": " ".join(sys.argv),
            "tf32": {"matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn": torch.backends.cudnn.allow_tf32},
            "args": vars(args)}


def _positive_int(text):
    """argparse type: an int >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def _json_object(text):
    """argparse type: a JSON object, as a dict."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON ({error}); pass e.g. '{{\"min_block_size\": 3}}'")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object like '{{\"min_block_size\": 3}}', got {text}")
    return value


if __name__ == "__main__":
    main()
