"""Where the GPU memory of torch.compile(backend="tensorrt") goes at its peak, by the code that allocated it (issue 11).

    python benchmarks/memory.py --model bert
    python benchmarks/memory.py --model resnet50 --batch 32
    python benchmarks/memory.py --model bert --frames 5      # each line's bytes by its innermost 5 frames too

The model runs once eagerly (so CUDA's and cuBLAS's first-use allocations are not counted), then CUDA's memory
profiler (torch.cuda.memory._record_memory_history) records the compile, its first call and --calls more calls.
Replaying the recorded allocations finds the moment the most memory was live above what the process held before
the compile; the report groups what was live then by the torch_trt line that allocated it (else the first
Python line outside PyTorch, else "PyTorch"). A cold inductor cache (the default) counts inductor's buffers
while it generates code; with --inductor-cache-dir of an earlier run, the engine's generated code is loaded
instead. It needs CUDA: on a machine without it the script says so and exits.
"""

import argparse
import collections
import gc
import sys

import torch

import measure
from workloads import WORKLOADS, inputs_for, load

MIB = 2 ** 20
PACKAGE = "torch_trt/"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(WORKLOADS), default="bert")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--calls", type=int, default=20, help="calls after the first, recorded too")
    parser.add_argument("--top", type=int, default=12, help="allocating lines reported")
    parser.add_argument("--inductor-cache-dir", help="inductor's cache directory (default: a fresh temporary one)")
    parser.add_argument("--trace-entries", type=int, default=2_000_000,
                        help="allocation events the profiler keeps (a transformer's compile makes hundreds of thousands)")
    parser.add_argument("--frames", type=int, default=0,
                        help="under each allocating line, its bytes by their innermost N Python frames (PyTorch's too)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("benchmarks/memory.py reads CUDA's memory profiler: run it on a machine with a GPU")
    measure.use_inductor_cache(args.inductor_cache_dir)
    device = torch.device("cuda")
    workload = WORKLOADS[args.model]()
    before_model = torch.cuda.memory_allocated(device)
    with torch.no_grad():
        model, inputs = load(workload, device, torch.float16), inputs_for(workload, args.batch, device, torch.float16)
        model(*inputs)
        measure.free_memory(device)
        start = torch.cuda.memory_allocated(device)
        torch.cuda.memory._record_memory_history(stacks="python", max_entries=args.trace_entries)
        try:
            compiled = torch.compile(model, backend="tensorrt")
            for _ in range(1 + args.calls):
                compiled(*inputs)
            torch.cuda.synchronize(device)
            gc.collect()
            steady = torch.cuda.memory_allocated(device)
            snapshot = torch.cuda.memory._snapshot()
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)
    trace = snapshot["device_traces"][torch.cuda.current_device()]
    if truncated(trace, args.trace_entries):
        print(f"WARNING: the profiler kept only the last {len(trace)} allocation events, so the earliest are missing "
              "from the peak and its owners below; run again with a larger --trace-entries")
    peak, live = live_at_peak(trace)
    print(f"{args.model}, batch {args.batch}, float16: weights {(start - before_model) / MIB:.0f} MiB, then "
          f"{peak / MIB:.0f} MiB more at the peak and {(steady - start) / MIB:.0f} MiB more after "
          f"{1 + args.calls} calls")
    for owner, size in by_owner(live).most_common(args.top):
        print(f"  {size / MIB:8.1f} MiB  {owner}")
        if args.frames:
            for frames, part in by_innermost(live, owner, args.frames).most_common(args.top):
                print(f"      {part / MIB:8.1f} MiB  {frames}")


def truncated(trace, kept):
    """Whether the profiler's ring buffer, which keeps the last `kept` events, dropped earlier ones from `trace`."""
    return len(trace) >= kept


def live_at_peak(trace):
    """(bytes, {address: (bytes, frames)}): the most memory live at once in a device trace of the memory profiler,
    above what was live when the recording started, and the allocations made since then live at that moment."""
    live, total, peak, at_peak = {}, 0, 0, {}
    for event in trace:
        if event["action"] == "alloc":
            live[event["addr"]] = (event["size"], event["frames"])
            total += event["size"]
            if total > peak:
                peak, at_peak = total, dict(live)
        elif event["action"] == "free_completed":  # of a block allocated before the recording too
            live.pop(event["addr"], None)
            total -= event["size"]
    return peak, at_peak


def by_owner(allocations):
    """Counter of bytes per allocating line (`owner`) of {address: (bytes, frames)}."""
    sizes = collections.Counter()
    for size, frames in allocations.values():
        sizes[owner(frames)] += size
    return sizes


def by_innermost(allocations, allocating_line, depth):
    """Counter of bytes per innermost `depth` Python frames of the allocations whose owner is `allocating_line`."""
    sizes = collections.Counter()
    for size, frames in allocations.values():
        if owner(frames) == allocating_line:
            python = [f for f in frames if f["filename"].endswith(".py")][:depth]
            sizes[" < ".join(f"{f['filename'].rsplit('/', 1)[-1]}:{f['line']} {f['name']}" for f in python)] += size
    return sizes


def owner(frames):
    """The innermost torch_trt frame of an allocation ("path:line function"), else its innermost Python frame
    outside PyTorch, else "PyTorch"."""
    python = [f for f in frames if f["filename"].endswith(".py")]
    ours = [f for f in python if PACKAGE in f["filename"]]
    chosen = ours or [f for f in python if "/torch/" not in f["filename"]]
    if not chosen:
        return "PyTorch"
    frame = chosen[0]
    name = frame["filename"].split(PACKAGE)[-1] if ours else frame["filename"].rsplit("/", 1)[-1]
    return f"{name}:{frame['line']} {frame['name']}"


if __name__ == "__main__":
    main()
