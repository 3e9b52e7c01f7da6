"""A TorchScript graph as text to compare: two traces, or two engines' graphs, are the same program when it is equal."""

import re

import torch


def canonical_text(graph):
    """The graph's text without value names, shapes, class-name mangling or source locations, plus constant shapes."""
    graph = graph.copy()
    torch._C._jit_pass_erase_shape_information(graph)
    graph = torch._C._jit_pass_canonicalize(graph, False)
    text = re.sub(r"___torch_mangle_\d+\.", "", graph.str(False))
    shapes = [(tuple(t.shape), t.dtype) for t in tensor_constants(graph)]
    return f"{text}\nconstants: {shapes}"


def tensor_constants(graph):
    """The tensor values of the graph's constants, in node order."""
    return [n.t("value") for n in graph.findAllNodes("prim::Constant")
            if n.output().type().kind() == "TensorType" and n.hasAttribute("value")]
