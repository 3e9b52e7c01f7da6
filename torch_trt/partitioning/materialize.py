"""Make a Placement real in the graph: engines get their own copies of the glue they read, segments become contiguous.

Stitching replaces an engine segment by one call placed after its last node, so no node outside
the segment may sit between its first and last node. `materialize` (1) gives each engine
segment its own copy of each rebuilt glue value its nodes read: the glue nodes are cloned into
the segment, so the evaluators compute them in the engine (sizes from the network's static dims,
int arithmetic, lists, lists of tensors when built; sizes of dynamic dims and arithmetic on them
as shape tensors when run), and only tensors cross the boundary while PyTorch keeps its own copy
where it needs one. A value that is the same in every shape analysis run but reads the shape of
a tensor the engine never receives becomes a constant holding what shape analysis saw (exact,
as it derives from shapes that are the same in every run); one that varies reads the tensor,
which enters the engine for its shape; (2) drops glue nothing reads any more; (3) moves the
nodes into the placement's order: constants first, then each segment's nodes, each remaining glue
node just before its first reader or before a barrier it preceded.
"""

from .segment import SegmentKind, used_values
from .support import is_tensor


def materialize(graph, placement, infos):
    """Rewrite `graph` so that each segment of `placement` is a contiguous run of nodes in execution order."""
    for segment in placement.segments:
        if segment.kind == SegmentKind.ENGINE:
            _copy_glue(graph, segment, placement.rebuilt, infos)
    placement.glue = _drop_unused(placement.glue)
    _reorder(graph, placement)


def _copy_glue(graph, segment, rebuilt, infos):
    """Replace the segment's reads of rebuilt glue by clones of the nodes computing them (see the docstring)."""
    copies, nodes = {}, []
    produced = {value for node in segment.nodes for value in node.outputs()}

    def copy(value, before):
        source = value.node()
        if value not in copies and any(is_tensor(v) and v not in produced for v in source.inputs()) \
                and value in infos and infos[value].constant:  # a fixed shape of a tensor the engine does not get
            with graph.insert_point_guard(before):
                copies[value] = graph.insertConstant(infos[value].values[0])
        elif value not in copies:
            clone = graph.createClone(source, lambda v: copy(v, before) if v.node() in rebuilt else v)
            clone.insertBefore(before)
            nodes.append(clone)
            copies.update(zip(source.outputs(), clone.outputs()))
        return copies[value]

    for node in segment.nodes:
        for value in list(node.inputs()):
            if value.node() in rebuilt:
                node.replaceInputWith(value, copy(value, node))
        nodes.append(node)
    segment.nodes = nodes


def _drop_unused(glue):
    """Destroy glue whose readers all use engine copies now; return the glue still read, in graph order."""
    kept = []
    for node in reversed(glue):
        if any(value.uses() for value in node.outputs()):
            kept.append(node)
        else:
            node.destroy()
    return kept[::-1]


def _reorder(graph, placement):
    """Move every node of the top block into the placement's order (see the module docstring)."""
    nodes = list(graph.nodes())
    position = {node: index for index, node in enumerate(nodes)}
    constants = [node for node in nodes if node.kind() == "prim::Constant"]
    movable = [node for node in nodes if node.kind() != "prim::Constant"]
    for constant in constants:
        if movable:
            constant.moveBefore(movable[0])
    end = graph.return_node()
    glue, emitted = set(placement.glue), set()

    def emit(node):
        for value in used_values(node):
            if value.node() in glue and value.node() not in emitted:
                emit(value.node())
        node.moveBefore(end)
        emitted.add(node)

    for segment in placement.segments:
        for node in segment.nodes:
            if node in placement.barriers and segment.kind == SegmentKind.TORCH:
                for earlier in placement.glue:  # glue read before a write or a side effect still runs before it
                    if position[earlier] < position[node] and earlier not in emitted:
                        emit(earlier)
            emit(node)
    for node in placement.glue:  # what only the graph's outputs read, in graph order
        if node not in emitted:
            emit(node)
