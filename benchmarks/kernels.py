"""Where one call's GPU time goes, kernel by kernel, for each backend (issue 11: what the profiler says dominates).

    python benchmarks/kernels.py --model resnet50 --batch 32
    python benchmarks/kernels.py --model bert --batch 1 --backends inductor-reduce-overhead torch_trt --top 25
    python benchmarks/kernels.py --model bert --batch 1 --dtype float32

Each backend compiles a freshly loaded model (float16 unless --dtype says otherwise) (as latency.py does) and is warmed up. Per call, it prints
the latency as latency.py measures it (CUDA events, one call at a time), the host's time to issue the call (no
synchronization), and, from --calls calls under torch.profiler, the GPU's busy time (its kernels and copies) and
the kernels that took the most of it, grouped by name, with their count per call. CUDA-graph replays are broken
down into their kernels too. Latency above the GPU's busy time is time the GPU waited for the host.
"""

import argparse
import collections
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

import backends
import measure
from workloads import WORKLOADS, inputs_for, load

NAME_LENGTH = 110  # characters of a kernel's name printed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(WORKLOADS), default="resnet50")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--backends", nargs="+", default=["inductor-reduce-overhead", "torch_trt"],
                        choices=list(backends.BACKENDS))
    parser.add_argument("--dtype", choices=["float16", "float32"], default="float16")
    parser.add_argument("--calls", type=int, default=20, help="profiled calls per backend")
    parser.add_argument("--top", type=int, default=15, help="kernels printed per backend")
    args = parser.parse_args()
    measure.use_inductor_cache()
    device, dtype = torch.device("cuda"), getattr(torch, args.dtype)
    workload = WORKLOADS[args.model]()
    for backend in args.backends:
        with torch.no_grad():
            model = load(workload, device, dtype)
            inputs = inputs_for(workload, args.batch, device, dtype)
            function = model if backend == "eager" else backends.compile_for(model, backend, {})
            latency_ms = statistics.median(measure.latencies_ms(function, inputs, args.calls, 10, device))
            host_ms = statistics.median(measure.host_times_ms(function, inputs, args.calls, device))
            kernels = profile_calls(function, inputs, args.calls)
        busy_ms = sum(total for total, _ in kernels.values())
        print(f"\n{workload.label}, batch {args.batch}, {args.dtype}, {backend}: latency {latency_ms:.3f} ms, host "
              f"{host_ms:.3f} ms, GPU busy {busy_ms:.3f} ms in {sum(count for _, count in kernels.values()):.0f} "
              "kernels and copies per call")
        for name, (total, count) in sorted(kernels.items(), key=lambda item: -item[1][0])[:args.top]:
            print(f"  {total:7.3f} ms  {100 * total / busy_ms:5.1f}%  x{count:<4.0f} {name[:NAME_LENGTH]}")
        del model, function
        measure.free_memory(device)


def profile_calls(function, inputs, calls):
    """{kernel name: (GPU ms per call, launches per call)} over `calls` profiled calls."""
    kernels = collections.defaultdict(lambda: [0.0, 0])
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
        for _ in range(calls):
            function(*inputs)
        torch.cuda.synchronize()
    for event in profiler.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            kernels[event.name][0] += event.device_time_total / 1e3 / calls
            kernels[event.name][1] += 1 / calls
    return {name: tuple(value) for name, value in kernels.items()}


if __name__ == "__main__":
    main()
