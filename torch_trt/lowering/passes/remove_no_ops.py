"""Remove ops that do nothing at inference: eval-mode dropout, contiguous, detach."""

from ..rewrite import rewrite_pass

_DROPOUTS = ("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout")

_remove_contiguous_and_detach = rewrite_pass(
    "remove_contiguous_and_detach", "Replace contiguous and detach by their input.",
    ("""graph(%x, %format):
        %y = aten::contiguous(%x, %format)
        return (%y)""", """graph(%x, %format):
        return (%x)"""),
    ("""graph(%x):
        %y = aten::detach(%x)
        return (%y)""", """graph(%x):
        return (%x)"""),
)


def remove_no_ops(graph):
    """Replace dropout whose `train` is a constant False, contiguous and detach by their input."""
    for node in [n for kind in _DROPOUTS for n in graph.findAllNodes(kind, True)]:
        train = node.inputsAt(2)
        if train.node().kind() == "prim::Constant" and train.toIValue() is False:
            node.output().replaceAllUsesWith(node.inputsAt(0))
            node.destroy()
    _remove_contiguous_and_detach(graph)
