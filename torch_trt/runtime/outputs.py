"""What a compiled graph returns: a tensor of its own on every call, as eager's are.

Freezing and constant propagation turn a tensor the forward creates from nothing (`torch.zeros(2, 3)`, an arange,
a buffer times two) into a constant of the graph. Returned as it is, every call would hand out that one tensor, and a
caller's in-place write to one result would show in the next. `copy_returned_constants` returns a copy of it instead
(torch_trt::copy_constant: TorchScript's executor would fold an aten::clone of a constant back into the constant).
"""

from ..lowering.mutation import viewed_input
from .stitch import op_after

_CONTAINERS = ("prim::TupleConstruct", "prim::ListConstruct", "prim::DictConstruct")


def copy_returned_constants(graph):
    """Return a copy of each returned tensor that is a graph constant, or a view of one."""
    copies = {}
    for user, index, value in _returned_tensors(graph.return_node()):
        base = value
        while viewed_input(base.node()) is not None:
            base = viewed_input(base.node())
        if base.node().kind() != "prim::Constant":
            continue
        if value not in copies:
            copies[value], _ = op_after(graph, "torch_trt::copy_constant", value, (), value.node())
        user.replaceInput(index, copies[value])


def _returned_tensors(node):
    """(user, input index, value) of each tensor that `node` returns or packs into what it returns."""
    for index, value in enumerate(node.inputs()):
        if value.node().kind() in _CONTAINERS and len(value.uses()) == 1:
            yield from _returned_tensors(value.node())
        elif value.type().kind() == "TensorType":
            yield node, index, value
