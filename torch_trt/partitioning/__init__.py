"""Partitioning: split a lowered graph into engine segments and PyTorch segments.

`partition(graph, settings, input_specs)` returns the segments in graph order. Output packing
nodes (tuple/list construction of the results) stay in PyTorch; every other node must be
convertible, else UnsupportedOperatorError lists each node with its reason.
"""

from ..errors import UnsupportedOperatorError, describe_node
from .segment import Segment, SegmentKind, extract_graph
from .support import OUTPUT_PACKING, unsupported_reason


def _is_output_packing(node):
    return node.kind() in OUTPUT_PACKING and all(
        use.user.kind() == "prim::Return" or _is_output_packing(use.user) for use in node.output().uses())


def partition(graph, settings, input_specs):
    """One engine segment with every computing node; error naming each node that cannot convert."""
    nodes = [n for n in graph.nodes() if n.kind() != "prim::Constant" and not _is_output_packing(n)]
    reasons = [(describe_node(n), reason) for n in nodes if (reason := unsupported_reason(n, settings))]
    if reasons:
        raise UnsupportedOperatorError(reasons)
    if not nodes:
        return []
    segment = Segment(SegmentKind.ENGINE, nodes).compute_boundary()
    specs = dict(zip([v for v in graph.inputs() if v.type().kind() == "TensorType"], input_specs))
    segment.input_specs = [specs[v] for v in segment.inputs]
    return [segment]


__all__ = ["partition", "Segment", "SegmentKind", "extract_graph"]
