"""Remove ops that do nothing at inference (eval-mode dropout, contiguous, detach); views become reshapes."""

from ..rewrite import matching_nodes, rewrite_pass

_DROPOUTS = ("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout")


def _train_is_false(node):
    train = node.inputsAt(2)
    return train.node().kind() == "prim::Constant" and train.toIValue() is False


def remove_no_ops(graph):
    """Replace eval-mode dropout, detach, and contiguous whose result nothing writes in place, by their input."""
    aliases = graph.alias_db()
    # contiguous copies a strided input: an in-place write to its result must not reach the input
    copies = [n for n in matching_nodes(graph, "aten::contiguous") if not aliases.has_writers(n.output())]
    nodes = [n for op in _DROPOUTS for n in matching_nodes(graph, op, _train_is_false)]
    for node in nodes + copies + matching_nodes(graph, "aten::detach"):
        node.output().replaceAllUsesWith(node.inputsAt(0))
        node.destroy()


# Without `contiguous` a view may read a tensor whose strides it cannot express (transpose, then
# view). Every view becomes a reshape rather than only those that read a removed `contiguous`,
# because a strided input can also reach a view through other ops (a slice of the transposed
# tensor, a reshape that kept strides); reshape returns the same view wherever a view is legal,
# and engines have no strides, so nothing else changes.
view_to_reshape = rewrite_pass(
    "view_to_reshape", "Rewrite aten::view(self, size) as aten::reshape, the same op wherever a view is legal.",
    ("aten::view", """graph(%x, %size):
        %y = aten::reshape(%x, %size)
        return (%y)"""),
)
