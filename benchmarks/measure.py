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


def timed_first_call(make, inputs, device):
    """(callable, seconds): `make()` (e.g. torch.compile) and its first call, where compilation happens."""
    start = time.perf_counter()
    function = make()
    function(*inputs)
    synchronize(device)
    return function, time.perf_counter() - start


def peak_memory_mib(function, device):
    """(function's result, MiB): the peak memory allocated while it ran above what was allocated before; None on CPU."""
    if device.type != "cuda":
        return function(), None
    synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    result = function()
    synchronize(device)
    return result, (torch.cuda.max_memory_allocated(device) - before) / 2**20


def free_memory(device):
    """Collect garbage and give cached device memory back, so the next measurement starts clean."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def percentile(values, fraction):
    """The nearest-rank percentile: the smallest value with at least `fraction` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def device_name(device):
    """The GPU's name, or "cpu"."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
