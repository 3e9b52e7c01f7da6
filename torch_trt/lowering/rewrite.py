"""Node-local rewrites: each matched node is replaced by the nodes of a replacement graph, at its own place.

A rule is (op, replacement, when): `op` names the schema ("aten::conv2d" is the overload without a
name, "aten::conv2d.padding" the named one), `replacement` is TorchScript IR text or a Graph whose
inputs are the node's inputs in order and whose outputs replace the node's outputs, and `when` is an
optional `(node) -> bool` condition. The replacement is inserted right before the matched node, so
nothing moves across an in-place write the way LibTorch's pattern rewriter (which inserts after the
last producer of the pattern's inputs) moves it.
"""

import functools

import torch


def op_name(node):
    """`aten::name` or `aten::name.overload` of the node's matched schema; None for nodes without one."""
    schema = node.schema()
    return None if schema == "(no schema)" else schema.split("(", 1)[0]


@functools.lru_cache(maxsize=None)
def parse(ir):
    """The Graph of TorchScript IR text, parsed once."""
    return torch._C.parse_ir(ir)


def replace_node(graph, node, replacement):
    """Insert `replacement` (IR text or Graph) before `node` on the node's inputs, use its outputs, destroy the node."""
    replacement = parse(replacement) if isinstance(replacement, str) else replacement
    inputs = list(node.inputs())
    counts = (len(list(replacement.inputs())), len(list(replacement.outputs())))
    if counts != (len(inputs), node.outputsSize()):
        raise ValueError(f"a replacement for {node.kind()} has {counts[0]} inputs and {counts[1]} outputs, "
                         f"the node {len(inputs)} and {node.outputsSize()}")
    with graph.insert_point_guard(node):
        outputs = graph.insertGraph(replacement, inputs)
    for old, new in zip(node.outputs(), outputs):
        if new not in inputs:  # a computed value keeps what the trace knew of the old one (shape, dtype)
            new.setType(old.type())
        old.replaceAllUsesWith(new)
    node.destroy()


def insert_int_list(graph, values):
    """An int[] of `values` made at the graph's insert point by a ListConstruct: a new list on every run (code may
    write to it), typed int[] even when empty (a constant list is one object for every run, untyped when empty)."""
    items = graph.insertNode(graph.create("prim::ListConstruct", [graph.insertConstant(int(v)) for v in values]))
    return items.output().setType(torch._C.ListType.ofInts())


def all_nodes(block):
    """The block's nodes and those of every block nested in them."""
    for node in block.nodes():
        yield node
        for inner in node.blocks():
            yield from all_nodes(inner)


def matching_nodes(graph, op, when=None):
    """The nodes (in nested blocks too) whose schema is `op` and that meet `when`."""
    return [node for node in graph.findAllNodes(op.split(".")[0], True)
            if op_name(node) == op and (when is None or when(node))]


def rewrite_pass(name, doc, *rules):
    """A pass `(graph) -> None` that applies each (op, replacement[, when]) rule, in order, to every matching node."""

    def run(graph):
        for op, replacement, *when in rules:
            for node in matching_nodes(graph, op, *when):
                replace_node(graph, node, replacement)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return run


def is_none(value):
    """Whether `value` is the None constant."""
    return value.type().kind() == "NoneType"


def is_constant(value, constant):
    """Whether `value` is a constant equal to `constant`."""
    return value.node().kind() == "prim::Constant" and value.toIValue() == constant
