"""The numbers a traced module returns, made numbers again.

A trace records a Python int, float or bool that forward computes from sizes and returns (`x.size(0) * 2`) as a
0-d tensor, so the traced module would return `tensor(8)` where the module returns `8`. The module's eager result on
the examples (tracing.py runs it) says which of the 0-d tensors the traced graph returns are numbers, and each
becomes one again through aten::Int, aten::Float or aten::Bool at the graph's end (its value still follows the input
sizes).
"""

import torch

_TO_NUMBER = {bool: ("aten::Bool", torch._C.BoolType), int: ("aten::Int", torch._C.IntType),
              float: ("aten::Float", torch._C.FloatType)}
_CONTAINERS = {"prim::TupleConstruct": tuple, "prim::ListConstruct": list}


def restore_returned_numbers(traced, eager):
    """Make the 0-d tensors `traced` returns where the module returned Python numbers in `eager` (its result on the
    traced examples) numbers again, in place."""
    graph = traced.graph
    graph.return_node().replaceInput(0, _restore(graph, graph.return_node().input(), eager, graph.return_node()))


def _zero_dim(value):
    return isinstance(value.type(), torch._C.TensorType) and value.type().dim() == 0


def _restore(graph, value, eager, user):
    """`value`, or a new Value in its place, inserted before its `user` node, that holds the number `eager` is;
    containers are rebuilt in place (a list only when all its items become numbers of one type)."""
    node = value.node()
    if node.kind() in _CONTAINERS and isinstance(eager, _CONTAINERS[node.kind()]) and len(eager) == node.inputsSize():
        items = list(zip(node.inputs(), eager))
        if node.kind() == "prim::ListConstruct" and not (len({type(e) for _, e in items}) == 1 and
                                                         all(_is_number_of(v, e) for v, e in items)):
            return value
        for index, (item, eager_item) in enumerate(items):
            node.replaceInput(index, _restore(graph, item, eager_item, node))
        types = [item.type() for item in node.inputs()]
        node.output().setType(torch._C.TupleType(types) if node.kind() == "prim::TupleConstruct" else
                              torch._C.ListType(types[0]))
        return value
    if not _is_number_of(value, eager):
        return value
    kind, number_type = _TO_NUMBER[type(eager)]
    with graph.insert_point_guard(user):
        return graph.insertNode(graph.create(kind, [value])).output().setType(number_type.get())


def _is_number_of(value, eager):
    """Whether the traced `value` is a 0-d tensor where eager returned the Python number `eager`."""
    return type(eager) in _TO_NUMBER and _zero_dim(value)
