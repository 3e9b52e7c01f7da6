"""Partitioning: split a lowered graph into engine segments and PyTorch segments.

`partition(graph, settings, input_specs, device, examples=None, refused=None)` runs shape analysis (shape_analysis.py),
decides where each node runs and groups nodes into segments (segmenter.py, asking support.py),
rewrites the graph so each segment is contiguous (materialize.py) and fills each segment's
boundary, engine input specs and the casts around engines (boundary.py: int64/float64 narrowed by
truncate_long_and_double, int8/uint8 held as int32). It returns the segments in execution order
with the report (report.py); with require_full_compilation=True any fallback is an
UnsupportedOperatorError listing each node, its schema and why.
"""

from dataclasses import dataclass

from ..errors import UnsupportedOperatorError, describe_node
from .boundary import input_cast, output_cast
from .materialize import materialize
from .report import PartitionReport, build_report
from .segment import Segment, SegmentKind, extract_graph
from .segmenter import segment_graph
from .shape_analysis import analyze


@dataclass
class Partition:
    """The segments in execution order and the report describing them."""

    segments: list
    report: PartitionReport


def partition(graph, settings, input_specs, device, examples=None, refused=None):
    """Segment `graph` in place (see the module docstring); nothing is changed when full compilation fails.

    `examples` are tensors for the opt run of shape analysis (the user's, when compile was given tensors);
    `refused` maps nodes that conversion or an engine build refused to their Reason: they run in PyTorch.
    """
    infos = analyze(graph, input_specs, device, examples)
    placement = segment_graph(graph, settings, infos, refused or {})
    if settings.require_full_compilation:
        reasons = [(describe_node(node), reason) for s in placement.segments for node, reason in s.reasons.items()]
        if reasons:
            raise UnsupportedOperatorError(reasons)
    materialize(graph, placement, infos)
    for segment in placement.segments:
        segment.compute_boundary()
        if segment.kind == SegmentKind.ENGINE:
            _engine_io(segment, infos, settings)
    return Partition(placement.segments, build_report(placement.segments, placement.glue, infos))


def _engine_io(segment, infos, settings):
    """Input specs and boundary casts: tensors of dtypes the engine holds in another cross cast (boundary.py)."""
    nodes = set(segment.nodes)
    segment.input_dtypes = [infos[v].dtype for v in segment.inputs]
    segment.input_casts = [input_cast(v, infos, settings, nodes) for v in segment.inputs]
    segment.input_specs = [infos[v].spec(cast) for v, cast in zip(segment.inputs, segment.input_casts)]
    segment.output_casts = [output_cast(infos[v], settings) for v in segment.outputs]


__all__ = ["partition", "Partition", "PartitionReport", "Segment", "SegmentKind", "extract_graph"]
