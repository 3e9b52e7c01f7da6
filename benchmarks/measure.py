"""Measurements shared by the benchmarks: per-call latency, compile time, peak memory, percentiles."""

import gc
import math
import os
import tempfile
import time

import torch


def use_inductor_cache(directory=None):
    """Point inductor's on-disk caches at `directory`, else at a fresh temporary one so that compile times are cold
    (torch_trt's generated code lands in inductor's FX graph cache too); returns the directory."""
    directory = directory or tempfile.mkdtemp(prefix="torch_trt-benchmark-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = directory
    return directory


def synchronize(device):
    """Wait for the device's queued work (nothing to wait for on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def latencies_ms(function, inputs, iterations, warmup, device):
    """Per-call latency in ms of `function(*inputs)`, `iterations` calls after `warmup` calls.

    On a GPU each call sits between two CUDA events and is waited for before the next one starts,
    so a figure is one call's latency, host launch cost included, not throughput of a full queue.
    """
    for _ in range(warmup):
        function(*inputs)
    synchronize(device)
    if device.type != "cuda":
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            function(*inputs)
            times.append((time.perf_counter() - start) * 1e3)
        return times
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iterations)]
    for start, end in events:
        start.record()
        function(*inputs)
        end.record()
        end.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def host_times_ms(function, inputs, calls, device):
    """The host's ms to issue each of `calls` calls of `function(*inputs)`, the device drained before each one (so
    the call's kernels are launched, not run, unless it waits for them)."""
    times = []
    for _ in range(calls):
        synchronize(device)
        start = time.perf_counter()
        function(*inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def timed_first_call(make, inputs, device):
    """(callable, seconds): `make()` (e.g. torch.compile) and its first call, where compilation happens."""
    start = time.perf_counter()
    function = make()
    function(*inputs)
    synchronize(device)
    return function, time.perf_counter() - start


class MemoryPeaks:
    """The peak CUDA memory allocated above what was allocated at its creation, over its whole life and since its
    last `restart()` (the calls after a compile, say); none on the CPU."""

    def __init__(self, device):
        self.device, self.base, self.earlier = device, None, None
        if device.type == "cuda":
            synchronize(device)
            self.base = self.earlier = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)

    def restart(self):
        """Start the second span here; the whole span keeps the peak reached before."""
        if self.base is not None:
            synchronize(self.device)
            self.earlier = max(self.earlier, torch.cuda.max_memory_allocated(self.device))
            torch.cuda.reset_peak_memory_stats(self.device)

    def mib(self):
        """(whole span's peak, peak since the last restart) in MiB above the start; (None, None) on the CPU."""
        if self.base is None:
            return None, None
        synchronize(self.device)
        recent = torch.cuda.max_memory_allocated(self.device)
        return (max(self.earlier, recent) - self.base) / 2**20, (recent - self.base) / 2**20


def free_memory(device):
    """Collect garbage, drop cuBLAS's workspaces and give cached device memory back, so the next measurement starts
    clean. A cuBLAS workspace (32 MiB on an H100) is made for each stream that runs a matrix product and kept by the
    process; reduce-overhead's CUDA graphs drop them all before they capture, so without this a row paid for the
    workspaces of the rows before it, or came out lower by theirs."""
    gc.collect()
    if device.type == "cuda":
        torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.empty_cache()


def percentile(values, fraction):
    """The nearest-rank percentile: the smallest value with at least `fraction` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def device_name(device):
    """The GPU's name, or "cpu"."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
