"""torch_trt.explain(module, inputs, **settings): the partition report compile would act on, without building.

It prepares the module as `torch_trt.compile` does (script or trace, freeze), then lowers,
partitions, converts and builds exactly as compile does, so refusals only conversion or the
builder can see are in the report too, and returns the PartitionReport: each segment's kind,
ops and boundary shapes, and for each node that runs in PyTorch the reason. Nothing is stitched.
"""

from .pipeline import build_engines, debug_logging
from .torchscript import prepare


def explain(module, inputs, **options):
    """The PartitionReport for compiling `module` with `inputs` and `options` (print it to read it)."""
    frozen, specs, settings, device, examples = prepare(module, inputs, options)
    with debug_logging(settings.debug):
        return build_engines(frozen, specs, settings, device, examples)[0].report
