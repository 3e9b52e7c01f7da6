"""Make in-place ops functional, their results keeping the dtype of the tensor they wrote."""

from .. import builtin
from ..mutation import written_inputs
from ..rewrite import all_nodes

_OPERAND_KINDS = ("TensorType", "IntType", "FloatType", "NumberType", "BoolType", "ComplexType")


def remove_mutation_keeping_dtypes(graph):
    """LibTorch's remove_mutation, then the ops it made functional cast back to the dtype of the tensor they wrote."""
    # As the in-place op's result is: `z += y` of an int32 z and an int64 y wraps in int32, and a float16 z stays
    # float16. The functional op promotes, and LibTorch's pass leaves the cast out.
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


def _promotes(node):
    """Whether the op takes an operand besides `self` that its result's dtype may come from."""
    return any(value.type().kind() in _OPERAND_KINDS for value in list(node.inputs())[1:])


def _cast_like(graph, value, like):
    """Every use of `value` reads it cast to `like`'s dtype instead (aten::to.other)."""
    with graph.insert_point_guard(value.node()):
        false, none = graph.insertConstant(False), graph.insertConstant(None)
    cast = graph.create("aten::to", [value, like, false, false, none]).insertAfter(value.node())
    cast.output().setType(value.type())
    value.replaceAllUsesAfterNodeWith(cast, cast.output())
