"""The partition report: each segment's kind, ops and boundary shapes, and why each PyTorch node fell back.

A tensor an engine holds in another dtype, cast at its boundary (boundary.py), reads `%x (4,):int8, int32 in the
engine`.

`build_report(segments, glue, infos)` is taken before stitching (which deletes engine nodes);
`str(report)` is what `debug=True` logs and what `torch_trt.explain` users read.
"""

from collections import Counter
from dataclasses import dataclass, field

from ..errors import describe_node
from .boundary import HELD_DTYPES
from .support import is_tensor


@dataclass
class SegmentReport:
    """One segment: 'engine' or 'torch', its ops in order, its boundary values, and per-node fallback reasons."""

    kind: str
    ops: list
    inputs: list
    outputs: list
    reasons: list = field(default_factory=list)  # (node description, Reason) for each node of a torch segment

    @property
    def node_count(self):
        return len(self.ops)

    def __str__(self):
        title = "TensorRT engine" if self.kind == "engine" else "PyTorch"
        lines = [f"{title}: {self.node_count} node(s): {_ops(self.ops)}",
                 f"    inputs:  {', '.join(self.inputs) or '-'}",
                 f"    outputs: {', '.join(self.outputs) or '-'}"]
        lines += [f"    - {node}: {reason}" for node, reason in self.reasons]
        return "\n".join(lines)


@dataclass
class PartitionReport:
    """The segments in execution order, and how many non-tensor glue nodes (sizes, lists, tuples) stay in PyTorch."""

    segments: list
    glue: int = 0

    @property
    def kinds(self):
        return [segment.kind for segment in self.segments]

    @property
    def engine_count(self):
        return self.kinds.count("engine")

    @property
    def fallbacks(self):
        """(node description, Reason) for every node that runs in PyTorch."""
        return [entry for segment in self.segments for entry in segment.reasons]

    def reason_counts(self):
        """`no converter: 2, control flow: 1`: the fallbacks counted by reason code, most frequent first."""
        codes = Counter(reason.code.value for _, reason in self.fallbacks)
        return ", ".join(f"{code}: {count}" for code, count in codes.most_common())

    def __str__(self):
        engine_nodes = sum(s.node_count for s in self.segments if s.kind == "engine")
        total = sum(s.node_count for s in self.segments)
        lines = [f"torch_trt partition: {len(self.segments)} segment(s), {self.engine_count} engine(s); "
                 f"{engine_nodes} of {total} node(s) in engines"]
        lines += [f"  [{index}] {segment}" for index, segment in enumerate(self.segments)]
        if self.fallbacks:
            lines.append(f"  fallbacks by reason: {self.reason_counts()}")
        if self.glue:
            lines.append(f"  {self.glue} non-tensor node(s) (sizes, lists, tuples, int arithmetic) run in PyTorch; "
                         "engines that read them get their own copies")
        return "\n".join(lines)


def build_report(segments, glue, infos):
    """The PartitionReport of segments whose boundaries are computed."""
    return PartitionReport([_segment_report(segment, infos) for segment in segments], len(glue))


def _segment_report(segment, infos):
    held_outputs = [cast and HELD_DTYPES[cast] for cast in segment.output_casts or [None] * len(segment.outputs)]
    return SegmentReport(segment.kind.value, [node.kind() for node in segment.nodes],
                         [_describe(value, infos, held) for value, held in
                          zip(segment.inputs, segment.input_casts or [None] * len(segment.inputs))],
                         [_describe(value, infos, held) for value, held in zip(segment.outputs, held_outputs)],
                         [(describe_node(node), reason) for node, reason in segment.reasons.items()])


def _describe(value, infos, held=None):
    """`%x (2, 3):float32` for tensors (`%x (2, 3):int8, int32 in the engine` when cast at the boundary);
    `%n int = 4` for other values."""
    info = infos.get(value)
    if is_tensor(value):
        return f"%{value.debugName()} {info.describe()}" + (f", {_name(held)} in the engine" if held else "")
    return f"%{value.debugName()} {value.type()}" + (f" {info.describe()}" if info else "")


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _ops(kinds):
    """`aten::relu x2, aten::add`: consecutive repeats folded."""
    runs = []
    for kind in kinds:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return ", ".join(kind if count == 1 else f"{kind} x{count}" for kind, count in runs)
