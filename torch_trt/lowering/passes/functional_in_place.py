"""Make in-place ops functional, their results keeping the dtype and shape of the tensor they wrote."""

from .. import builtin
from ..mutation import written_inputs
from ..rewrite import all_nodes

_OPERAND_KINDS = ("TensorType", "IntType", "FloatType", "NumberType", "BoolType", "ComplexType")


def remove_mutation_keeping_dtypes(graph):
    """LibTorch's remove_mutation; the ops it made functional keep the written tensor's dtype and shape."""
    # The dtype as the in-place op's result has it: `z += y` of an int32 z and an int64 y wraps in int32, and a float16
    # z stays float16; the functional op promotes, and LibTorch's pass leaves the cast out. The shape: eager raises
    # where another tensor operand would broadcast the result bigger than z, and so does an expand_as.
    # The pass makes new nodes only for the in-place ops it removes: a new node of an in-place op's functional kind is
    # one (its `self` may be another's result, in a chain of writes to one tensor).
    newest = max((value.unique() for node in all_nodes(graph.block()) for value in node.outputs()), default=-1)
    in_place = {node.kind() for node in all_nodes(graph.block())
                if node.inputsSize() and node.inputsAt(0) in written_inputs(node)}
    builtin.remove_mutation(graph)
    for node in list(all_nodes(graph.block())):
        made = node.outputsSize() == 1 and node.output().unique() > newest and node.kind() + "_" in in_place
        if made and _promotes(node):
            _cast_like(graph, node.output(), node.inputsAt(0))
        if made and _takes_another_tensor(node):
            _expanded_as(graph, node.output(), node.inputsAt(0))


def _promotes(node):
    """Whether the op takes an operand besides `self` that its result's dtype may come from."""
    return any(value.type().kind() in _OPERAND_KINDS for value in list(node.inputs())[1:])


def _takes_another_tensor(node):
    return any(value.type().kind() == "TensorType" for value in list(node.inputs())[1:])


def _expanded_as(graph, value, like):
    """Every use of `value` reads it expanded as `like` instead (aten::expand_as): a view where the shapes match,
    and where `value` is bigger (`z.mul_(y)` of a z of 1 row and a y of 5) an error, as eager's in-place op raises."""
    expanded = graph.create("aten::expand_as", [value, like]).insertAfter(value.node())
    expanded.output().setType(value.type())
    value.replaceAllUsesAfterNodeWith(expanded, expanded.output())


def _cast_like(graph, value, like):
    """Every use of `value` reads it cast to `like`'s dtype instead (aten::to.other)."""
    with graph.insert_point_guard(value.node()):
        false, none = graph.insertConstant(False), graph.insertConstant(None)
    cast = graph.create("aten::to", [value, like, false, false, none]).insertAfter(value.node())
    cast.output().setType(value.type())
    value.replaceAllUsesAfterNodeWith(cast, cast.output())
