"""Segment: a run of graph nodes that executes in an engine or in PyTorch, and its boundary values."""

import enum
from dataclasses import dataclass, field

import torch


class SegmentKind(enum.Enum):
    ENGINE = "engine"
    TORCH = "torch"


@dataclass
class Segment:
    """Nodes in execution order; `inputs` are values they use from outside, `outputs` values used outside.

    Engine segments also carry one torch_trt.Input per input (`input_specs`), and the casts the
    stitched graph does around the engine call (`input_casts`: the dtype an input is cast to, from its
    `input_dtypes`, and `output_casts`: the dtype an output is cast back to, or None per value) for the
    dtypes engines hold in another (boundary.py). PyTorch segments carry, per node, the Reason it could not run in
    an engine (`reasons`).
    """

    kind: SegmentKind
    nodes: list
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    input_specs: list = field(default_factory=list)
    input_dtypes: list = field(default_factory=list)
    input_casts: list = field(default_factory=list)
    output_casts: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)

    def compute_boundary(self):
        """Fill `inputs` and `outputs` from the nodes' uses (constants are copied, not passed)."""
        inside = set(self.nodes)
        produced = {value for node in self.nodes for value in node.outputs()}
        self.inputs = _unique(value for node in self.nodes for value in used_values(node)
                              if value not in produced and value.node().kind() != "prim::Constant")
        self.outputs = _unique(value for node in self.nodes for value in node.outputs()
                               if any(top_level_node(use.user) not in inside for use in value.uses()))
        return self


def used_values(node):
    """The values a node reads, including those its sub-blocks read from outside."""
    values = list(node.inputs())
    for block in node.blocks():
        inner = {v for n in block.nodes() for v in n.outputs()} | set(block.inputs())
        values += [v for n in block.nodes() for v in used_values(n) if v not in inner]
        values += [v for v in block.outputs() if v not in inner]
    return values


def top_level_node(node):
    """The node of the graph's top block that is or contains `node` (the return node counts as one)."""
    while node.owningBlock().owningNode() is not None:
        node = node.owningBlock().owningNode()
    return node


def _unique(values):
    seen, result = set(), []
    for value in values:
        if value not in seen:
            seen.add(value)
            result.append(value)
    return result


def extract_graph(segment):
    """A standalone graph of the segment's nodes (inputs become graph inputs, outputs graph outputs), and a map
    from each of its nodes to the segment node it copies (so a refusal can name the node in the partitioned graph)."""
    graph = torch._C.Graph()
    env, origins = {}, {}
    for value in segment.inputs:
        new = graph.addInput()
        new.setType(value.type())
        env[value] = new

    def lookup(value):
        if value not in env:  # a constant defined outside the segment: copy it in
            constant = graph.createClone(value.node(), lambda v: v)
            graph.insertNode(constant)
            env[value] = constant.output()
        return env[value]

    for node in segment.nodes:
        clone = graph.createClone(node, lookup)
        graph.insertNode(clone)
        origins[clone] = node
        for old, new in zip(node.outputs(), clone.outputs()):
            if not old.debugName().isdigit():  # TorchScript refuses purely numeric debug names
                new.setDebugName(old.debugName())
            env[old] = new
    for value in segment.outputs:
        graph.registerOutput(env[value])
    return graph, origins
