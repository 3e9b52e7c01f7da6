"""Where the first call of torch.compile(backend="tensorrt") spends its time, per pipeline stage (issue 11).

    python benchmarks/compile_stages.py --model bert                 # on CUDA (fp16) when present, else CPU (fp32)
    python benchmarks/compile_stages.py --model vit_b_16 --device cuda --batch 32
    python benchmarks/compile_stages.py --model bert --inductor-timers     # and dynamo's and inductor's own timers

A run starts with inductor's on-disk caches empty (a fresh temporary directory), so the figures are a cold
compile. To time a warm one (a saved module, or the same model in a new process, loading the engine's
generated code from inductor's FX graph cache), run twice with the same --inductor-cache-dir.

Each stage is a pipeline function, timed by a wrapper around it (wall time of all its calls; stages nest, so
the rows do not add up). "outside the backend" is the first call minus the backend's own time: dynamo's
tracing and guards, plus what the compiled graph does on its first call, where the reference engine is
loaded (get_runner) and inductor generates its kernels (_generate). The eager model runs once before, so
the first call does not pay CUDA's own first-use costs. --inductor-timers adds the largest of the timers dynamo
and inductor keep themselves (torch._dynamo.utils.compilation_time_metrics: tracing, AOT autograd, lowering,
scheduling, code generation), for the model's graph and the engines' programs together.
"""

import argparse
import collections
import functools
import importlib
import sys
import time

import torch
from torch._dynamo.utils import compilation_time_metrics, counters

import measure
from workloads import WORKLOADS, inputs_for, load

STAGES = [
    ("torch_trt.backend.dynamo", "tensorrt_backend"), ("torch_trt.backend.fx_to_script", "trace_frozen"),
    ("torch_trt.backend.fx_to_script", "constants_digest"), ("torch_trt.backend.decompositions", "decompose"),
    ("torch_trt.backend.pipeline", "compile_frozen"), ("torch_trt.lowering", "lower"),
    ("torch_trt.lowering.specialize", "specialize"), ("torch_trt.partitioning", "partition"),
    ("torch_trt.conversion.interpreter", "convert_graph"), ("torch_trt.conversion.build", "build_engine"),
    ("torch_trt.runtime.stitch", "stitch_engine"), ("torch_trt.runtime.engine_manager", "get_runner"),
    ("torch_trt.targets.reference.program", "_generate"),
]
INDUCTOR_TIMERS = 12  # rows of --inductor-timers


def _timed(spent):
    """Wrap every stage function wherever a torch_trt module holds it; `spent[stage]` adds up its wall time."""
    for module_name, name in STAGES:
        original = getattr(importlib.import_module(module_name), name)

        @functools.wraps(original)
        def wrapper(*args, __original=original, __stage=f"{module_name}.{name}", **kwargs):
            start = time.perf_counter()
            try:
                return __original(*args, **kwargs)
            finally:
                spent[__stage] += time.perf_counter() - start

        for module in [m for n, m in list(sys.modules.items()) if n.startswith("torch_trt") and m is not None]:
            for attribute, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attribute, wrapper)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(WORKLOADS), default="bert")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--inductor-cache-dir", help="inductor's cache directory (default: a fresh temporary one)")
    parser.add_argument("--inductor-timers", action="store_true", help="also print dynamo's and inductor's timers")
    args = parser.parse_args()
    cache = measure.use_inductor_cache(args.inductor_cache_dir)
    device = torch.device(args.device)
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    spent = collections.defaultdict(float)
    _timed(spent)
    workload = WORKLOADS[args.model]()
    with torch.no_grad():
        model, inputs = load(workload, device, dtype), inputs_for(workload, args.batch, device, dtype)
        model(*inputs)
        compilation_time_metrics.clear()
        compiled = torch.compile(model, backend="tensorrt")
        start = time.perf_counter()
        compiled(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        total = time.perf_counter() - start
    backend = spent["torch_trt.backend.dynamo.tensorrt_backend"]
    print(f"{args.model} on {device}, batch {args.batch}, {dtype}: first call {total:.2f}s, "
          f"outside the backend {total - backend:.2f}s (inductor's cache: {cache})")
    fx_cache = {k: counters["inductor"][f"fxgraph_cache_{k}"] for k in ("hit", "miss", "bypass")}
    print(f"  inductor's FX graph cache: {fx_cache['hit']} hit(s), {fx_cache['miss']} miss(es), "
          f"{fx_cache['bypass']} bypass(es)")
    for module_name, name in STAGES:
        print(f"  {spent[f'{module_name}.{name}']:6.2f}s  {module_name}.{name}")
    if args.inductor_timers:
        print("  dynamo's and inductor's timers (nested, so they do not add up):")
        timers = sorted(((sum(times), name) for name, times in compilation_time_metrics.items()), reverse=True)
        for seconds, name in timers[:INDUCTOR_TIMERS]:
            print(f"  {seconds:6.2f}s  {name}")


if __name__ == "__main__":
    main()
