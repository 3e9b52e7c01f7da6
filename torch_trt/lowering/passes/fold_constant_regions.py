"""Fold computations on constants that write in place: a mask built by slice assignment becomes one constant.

LibTorch's constant propagation skips any node that writes to its inputs, so a tensor made from
constants and then filled by slice assignments (swin's shifted-window attention mask:
`mask = zeros(...)`, `mask[a:b, c:d] = count`, ...) stays a chain of ops, including in-place writes
the partitioner must keep in PyTorch. Such a region reads nothing but constants, so running it once
at compile time gives exactly the values it gives on every call.
"""

import torch

from .. import builtin
from ..mutation import writes_in_place, written_inputs
from ..rewrite import all_nodes

_PRIM_OPS = {"prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct", "prim::TupleUnpack",
             "prim::TupleIndex", "prim::NumToTensor", "prim::min", "prim::max", "prim::abs"}
_SIDE_EFFECTS = {"aten::warn"}


def fold_constant_regions(graph):
    """Replace what top-level nodes compute from constants only, writing in place, by constants."""
    folded = False
    for region in _components(_constant_region(graph)):
        folded |= _fold(graph, region)
    if folded:
        builtin.constant_propagation(graph)


def _fold(graph, region):
    """Fold one connected region if it writes in place and nothing outside reads it before its last write."""
    writes = [node for node in region if writes_in_place(node)]
    if not writes:
        return False
    nodes = set(region)
    escaping = [v for node in region for v in node.outputs() if any(use.user not in nodes for use in v.uses())]
    if not all(_is_constant_type(v.type()) for v in escaping):
        return False
    if any(not use.user.isAfter(writes[-1]) for v in escaping for use in v.uses() if use.user not in nodes):
        return False  # read outside the region before its last write: one constant cannot stand for both
    if _shared_beyond(graph, nodes, escaping):
        return False  # one constant, written on every call (or by the caller), would carry each call's writes on
    for value, result in zip(escaping, _evaluate(region, escaping)):
        with graph.insert_point_guard(value.node()):
            value.replaceAllUsesWith(graph.insertConstant(result))
    for node in reversed(region):
        node.destroy()
    return True


def _shared_beyond(graph, nodes, escaping):
    """Whether one of the `escaping` tensors (or a view of one) is written in place by a node outside `nodes`, or is
    among the graph's outputs, which callers may write."""
    aliases = graph.alias_db()
    outside = [v for node in all_nodes(graph.block()) if node not in nodes for v in written_inputs(node)]
    return any(aliases.may_contain_alias(value, other) for value in escaping if value.type().kind() == "TensorType"
               for other in outside + list(graph.outputs()))


def _components(region):
    """The region split into parts that share no value (each in graph order): a write reaches only its own part."""
    part_of, parts = {}, []
    for node in region:
        joined = {id(part_of[v]): part_of[v] for v in node.inputs() if v in part_of}
        part = [node]
        for other in joined.values():
            part += other
            parts.remove(other)
        parts.append(part)
        for member in part:
            for value in member.outputs():
                part_of[value] = part
    order = {node: index for index, node in enumerate(region)}
    return [sorted(part, key=order.__getitem__) for part in parts]


def _constant_region(graph):
    """The top-level nodes, in order, whose inputs are all constants or outputs of earlier such nodes."""
    region, known = [], set()
    for node in graph.nodes():
        if node.kind() == "prim::Constant":
            known.update(node.outputs())
        elif _foldable(node) and all(v in known for v in node.inputs()):
            region.append(node)
            known.update(node.outputs())
    return region


def _foldable(node):
    kind = node.kind()
    if list(node.blocks()) or kind in _SIDE_EFFECTS or node.isNondeterministic():
        return False
    return kind.startswith("aten::") or kind in _PRIM_OPS


def _evaluate(region, escaping):
    """Run the region once; the values of `escaping`. Constants it reads are copied in, so writes cannot reach them."""
    graph, mapping, copied = torch._C.Graph(), {}, []
    for node in region:
        for value in node.inputs():
            if value not in mapping and value.node().kind() == "prim::Constant":
                if _mutable(value.type()):
                    mapping[value] = graph.addInput()
                    mapping[value].setType(value.type())
                    copied.append(_constant(value))
                else:
                    mapping[value] = graph.insertNode(graph.createClone(value.node(), lambda v: v)).output()
        clone = graph.insertNode(graph.createClone(node, lambda v: mapping[v]))
        mapping.update(zip(node.outputs(), clone.outputs()))
    results = graph.insertNode(graph.create("prim::TupleConstruct", [mapping[value] for value in escaping]))
    results.output().setType(torch._C.TupleType([value.type() for value in escaping]))
    graph.registerOutput(results.output())
    function = torch._C._create_function_from_graph("torch_trt_constant_region", graph)
    with torch.no_grad():
        return function(*[_copy(v) for v in copied])


def _is_constant_type(type_):
    """Whether a value of this type can be a prim::Constant."""
    kind = type_.kind()
    if kind == "ListType":
        return type_.getElementType().kind() in ("IntType", "FloatType", "BoolType")
    return kind in ("TensorType", "IntType", "FloatType", "BoolType", "StringType", "NoneType")


def _mutable(type_):
    return type_.kind() in ("TensorType", "ListType")


def _constant(value):
    """A prim::Constant's value; a tensor one as the tensor (toIValue gives a 0-dim one holding a Python number, the
    `3` of `t += 3`, as that number)."""
    node = value.node()
    return node.t("value") if value.type().kind() == "TensorType" and node.hasAttribute("value") else value.toIValue()


def _copy(value):
    return value.clone() if isinstance(value, torch.Tensor) else list(value)
