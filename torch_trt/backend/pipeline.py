"""The pipeline both front doors share: lower -> partition -> convert and build -> stitch.

`compile_frozen(module, input_specs, settings, device)` rewrites the frozen module's forward
graph in place, so the result is a ScriptModule that `torch.jit.save` writes as one file.
"""

import logging
import time

import torch

from ..conversion import convert_block
from ..lowering import lower
from ..partitioning import SegmentKind, extract_graph, partition
from ..runtime.stitch import stitch_engine
from ..targets import resolve_target, target_name

logger = logging.getLogger(__name__)


def compile_frozen(module, input_specs, settings, device):
    """Replace each engine segment of the frozen module's forward by an engine call; return the module."""
    graph = module.graph
    lower(graph)
    if settings.debug:
        logger.info("lowered graph:\n%s", graph)
    segments = partition(graph, settings, input_specs)
    trt = resolve_target(settings.target)
    engines = [s for s in segments if s.kind == SegmentKind.ENGINE]
    for index, segment in enumerate(engines, 1):
        start = time.perf_counter()
        logger.info("building engine %d/%d (%d nodes) on the %s target", index, len(engines), len(segment.nodes),
                    target_name(trt))
        engine_bytes = convert_block(extract_graph(segment), segment.input_specs, settings, trt, device)
        stitch_engine(graph, segment, engine_bytes, target_name(trt), device)
        logger.info("engine %d/%d built in %.2fs", index, len(engines), time.perf_counter() - start)
    torch._C._jit_pass_dce(graph)
    torch._C._jit_pass_lint(graph)
    if settings.debug:
        logger.info("compiled graph:\n%s", graph)
    return module
