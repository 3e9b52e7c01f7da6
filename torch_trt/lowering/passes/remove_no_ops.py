"""Remove ops that do nothing at inference (eval-mode dropout, detach); views become reshapes.

aten::contiguous stays: an engine converts it as the identity, and where it runs in PyTorch (its result leaves the
graph, or reaches an op that sees strides, such as as_strided) it makes the copy that op or the caller expects.
"""

from ..rewrite import matching_nodes, rewrite_pass

_DROPOUTS = ("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout")


def _train_is_false(node):
    train = node.inputsAt(2)
    return train.node().kind() == "prim::Constant" and train.toIValue() is False


def remove_no_ops(graph):
    """Replace eval-mode dropout and detach by their input."""
    nodes = [n for op in _DROPOUTS for n in matching_nodes(graph, op, _train_is_false)]
    for node in nodes + matching_nodes(graph, "aten::detach"):
        node.output().replaceAllUsesWith(node.inputsAt(0))
        node.destroy()


# An engine's input may have strides a view cannot express (a transposed input, then view), where
# its graph would have made it contiguous first or had a view of it all along. Reshape returns the
# same view wherever a view is legal, and engines have no strides, so nothing else changes.
view_to_reshape = rewrite_pass(
    "view_to_reshape", "Rewrite aten::view(self, size) as aten::reshape, the same op wherever a view is legal.",
    ("aten::view", """graph(%x, %size):
        %y = aten::reshape(%x, %size)
        return (%y)"""),
)
