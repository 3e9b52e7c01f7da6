"""torch_trt.explain(module, inputs, **settings): the partition report compile would act on, without building.

It prepares the module as `torch_trt.compile` does (script or trace, freeze), then lowers and
partitions a copy and returns the PartitionReport: each segment's kind, ops and boundary
shapes, and for each node that runs in PyTorch the reason. No engine is built.
"""

from .pipeline import debug_logging, partition_frozen
from .torchscript import prepare


def explain(module, inputs, **options):
    """The PartitionReport for compiling `module` with `inputs` and `options` (print it to read it)."""
    frozen, specs, settings, device, examples = prepare(module, inputs, options)
    with debug_logging(settings.debug):
        return partition_frozen(frozen, specs, settings, device, examples).report
