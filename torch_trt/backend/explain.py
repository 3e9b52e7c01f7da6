"""torch_trt.explain(module, inputs, **settings): the partition report compile would act on, without building.

It prepares the module as `torch_trt.compile` does (script or trace, freeze), then lowers and
partitions a copy and returns the PartitionReport: each segment's kind, ops and boundary
shapes, and for each node that runs in PyTorch the reason. No engine is built.
"""

import torch

from .._input import Input
from .._settings import CompileSettings
from .pipeline import debug_logging, partition_frozen
from .torchscript import quiet_torchscript, to_script_module


def explain(module, inputs, **options):
    """The PartitionReport for compiling `module` with `inputs` and `options` (print it to read it)."""
    settings = CompileSettings.from_options(options)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of torch_trt.Input or example tensors")
    specs = [i if isinstance(i, Input) else Input.from_tensor(i) for i in inputs]
    device = settings.resolved_device(next((i.device for i in inputs if isinstance(i, torch.Tensor)), None))
    examples = [i.to(device) if isinstance(i, torch.Tensor) else i.example("opt", device) for i in inputs]
    with quiet_torchscript(), debug_logging(settings.debug):
        frozen = torch.jit.freeze(to_script_module(module, examples).eval())
        return partition_frozen(frozen, specs, settings, device, examples).report
