"""Layers whose output is a view of their one input, replayed in a program run without code generation.

A shuffle with static reshape dims, or a slice with static bounds read in range, makes a view of its input
whose sizes, strides and offset follow from the input's own alone; working them out costs each call 10-40 µs
of Python (the reshape rules, the slice's per-dim checks), several times the tensor operation. The first call
at an input layout runs the layer and notes whether its output is such a view; later calls at that layout
make the view with one as_strided call. Layers reading a second input (a shape tensor) or weights are left
as they are: their views may depend on values.
"""

import torch
import torch.fx

_UNSEEN = object()


def replay_views(program):
    """`program` (a generated GraphModule) with every step that reads one input and no weights wrapped (module
    docstring); it reads the program's weights, and the program itself is left as it is."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(program.graph, {}))
    for node in graph.nodes:
        if node.op == "call_function" and _reads_one_input(node):
            node.target = _replaying(node.target)
    return torch.fx.GraphModule(program, graph, class_name=type(program).__name__)


def _reads_one_input(node):
    inputs, weights = node.args if len(node.args) == 2 else (None, None)
    return isinstance(inputs, (list, tuple)) and len(inputs) == 1 and weights == {}


def _replaying(compute):
    """`compute(inputs, weights)` that makes its view of the input with as_strided at every layout seen before."""
    views = {}  # (shape, strides, dtype) -> (sizes, strides, offset from the input's) of the output, or None

    def replay(inputs, weights):
        (tensor,) = inputs
        layout = (tensor.shape, tensor.stride(), tensor.dtype)
        view = views.get(layout, _UNSEEN)
        if view is _UNSEEN:
            result = compute(inputs, weights)
            views[layout] = _as_view(result, tensor)
            return result
        if view is None:
            return compute(inputs, weights)
        sizes, strides, offset = view
        return tensor.as_strided(sizes, strides, tensor.storage_offset() + offset)

    replay.__name__ = compute.__name__
    return replay


def _as_view(result, tensor):
    """(sizes, strides, offset from `tensor`'s) when `result` is a view of `tensor` of its dtype, else None."""
    if not isinstance(result, torch.Tensor) or result.dtype != tensor.dtype:
        return None
    root = tensor if tensor._base is None else tensor._base
    if result is not tensor and result._base is not root:
        return None
    return tuple(result.shape), result.stride(), result.storage_offset() - tensor.storage_offset()
