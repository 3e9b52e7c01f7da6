"""Specialization to the compiled inputs: fold what their rank, dtype and device decide, and the branches it picks.

A scripted module checks tensor metadata in Python `if`s (nn.MultiheadAttention's fast-path checks:
`query.dim() == 3`, dtypes, device type, `requires_grad`, autocast), so its graph keeps prim::If nodes
that the partitioner must leave in PyTorch, splitting every attention block out of the engines.
Those conditions are fixed once the inputs are: an engine checks each input's rank, dtype and device
on every call, compiled modules are inference-only (an input that requires grad is refused while grad
mode is on) and engines run in the precision they were built for, whatever autocast says.

`specialize(graph, analyze, device)` replaces those queries by constants, using the ranks and dtypes
shape analysis sees (`analyze()` gives {Value: TensorInfo} of top-level values; it runs the graph,
so it is called only when the graph has such queries), then lets constant
propagation fold the conditions and inline the branches taken. Values computed from tensor data are
never folded: only these metadata queries become constants. Returns whether the graph changed.
"""

import torch

from ..conversion.evaluators.prim import SCALAR_TYPE_CODES
from . import builtin


def specialize(graph, analyze, device):
    """Fold the metadata queries of the tensors shape analysis describes, then the branches they decide; True if any
    folded."""
    folded = [node for node in graph.findAllNodes("aten::is_autocast_enabled") if not list(node.inputs())]
    for node in folded:
        _replace(graph, node, False)
    queries = [(node, answer) for kind, answer in _QUERIES.items() for node in graph.findAllNodes(kind)]
    infos = analyze() if queries else {}
    for node, answer in queries:
        info = infos.get(node.inputsAt(0))
        if info is not None and hasattr(info, "dtype"):
            _replace(graph, node, answer(info, torch.device(device)))
            folded.append(node)
    for kind, same in (("aten::__is__", True), ("aten::__isnot__", False)):
        for node in graph.findAllNodes(kind):
            if node.inputsAt(0) is node.inputsAt(1):
                _replace(graph, node, same)
                folded.append(node)
    if not folded:
        return False
    for node in folded:
        node.destroy()
    builtin.constant_propagation(graph)
    _fold_agreeing_branches(graph.block())
    builtin.eliminate_dead_code(graph)
    for node in graph.findAllNodes("aten::is_grad_enabled"):  # a query dead code elimination keeps
        if not node.output().uses():
            node.destroy()
    return True


_QUERIES = {  # node kind -> (TensorInfo of its tensor input, engine device) -> the value it has at run time
    "aten::dim": lambda info, device: len(info.opt_shape),
    "prim::dtype": lambda info, device: SCALAR_TYPE_CODES[info.dtype],
    "aten::is_floating_point": lambda info, device: info.dtype.is_floating_point,
    "prim::requires_grad": lambda info, device: False,
    "prim::device": lambda info, device: device,
    "prim::is_cuda": lambda info, device: device.type == "cuda",
}


def _replace(graph, node, value):
    """Make the uses of `node`'s output read the constant `value` instead."""
    with graph.insert_point_guard(node):
        constant = graph.insertConstant(value)
    node.output().replaceAllUsesWith(constant)


def _fold_agreeing_branches(block):
    """An If output that every branch gives as the same constant is that constant, whatever the condition."""
    for node in block.nodes():
        for inner in node.blocks():
            _fold_agreeing_branches(inner)
        if node.kind() != "prim::If":
            continue
        branches = [list(inner.outputs()) for inner in node.blocks()]
        for index, output in enumerate(node.outputs()):
            values = [outputs[index] for outputs in branches]
            if all(v.node().kind() == "prim::Constant" for v in values) and _same_constant(values):
                with block.owningGraph().insert_point_guard(node):
                    output.replaceAllUsesWith(block.owningGraph().insertConstant(values[0].toIValue()))


def _same_constant(values):
    first = values[0].toIValue()
    if isinstance(first, torch.Tensor):
        return False
    return all(type(v.toIValue()) is type(first) and v.toIValue() == first for v in values[1:])
