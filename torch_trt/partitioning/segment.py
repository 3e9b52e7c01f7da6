"""Segment: a run of graph nodes that executes in an engine or in PyTorch, and its boundary values."""

import enum
from dataclasses import dataclass, field

import torch


class SegmentKind(enum.Enum):
    ENGINE = "engine"
    TORCH = "torch"


@dataclass
class Segment:
    """Nodes in graph order; `inputs` are values they use from outside, `outputs` values used outside."""

    kind: SegmentKind
    nodes: list
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    input_specs: list = field(default_factory=list)  # one torch_trt.Input per input (engine segments)

    def compute_boundary(self):
        """Fill `inputs` and `outputs` from the nodes' uses (constants are copied, not passed)."""
        inside = set(self.nodes)
        produced = {value for node in self.nodes for value in node.outputs()}
        self.inputs = _unique(value for node in self.nodes for value in node.inputs()
                              if value not in produced and value.node().kind() != "prim::Constant")
        self.outputs = _unique(value for node in self.nodes for value in node.outputs()
                               if any(use.user not in inside for use in value.uses()))
        return self


def _unique(values):
    seen, result = set(), []
    for value in values:
        if value not in seen:
            seen.add(value)
            result.append(value)
    return result


def extract_graph(segment):
    """A standalone graph of the segment's nodes: its inputs become graph inputs, its outputs graph outputs."""
    graph = torch._C.Graph()
    env = {}
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
        for old, new in zip(node.outputs(), clone.outputs()):
            if not old.debugName().isdigit():  # TorchScript refuses purely numeric debug names
                new.setDebugName(old.debugName())
            env[old] = new
    for value in segment.outputs:
        graph.registerOutput(env[value])
    return graph
