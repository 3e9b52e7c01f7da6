"""The compared backends: eager, inductor's three modes and torch_trt, as torch.compile arguments."""

import torch

BACKENDS = {  # torch.compile's arguments; in this order, so eager and every inductor mode precede torch_trt
    "eager": None,
    "inductor": {},
    "inductor-reduce-overhead": {"mode": "reduce-overhead"},
    "inductor-max-autotune": {"mode": "max-autotune"},
    "torch_trt": {"backend": "tensorrt"},
}
INDUCTOR_BACKENDS = [name for name in BACKENDS if name.startswith("inductor")]


def compile_for(model, backend, trt_options):
    """torch.compile(model) for the backend; reduce-overhead's CUDA graphs get a new step per call."""
    options = {"options": trt_options} if backend == "torch_trt" else {}
    compiled = torch.compile(model, **BACKENDS[backend], **options)
    if backend != "inductor-reduce-overhead":
        return compiled

    def stepped(*inputs):
        torch.compiler.cudagraph_mark_step_begin()  # the previous call's outputs may be overwritten
        return compiled(*inputs)

    return stepped
