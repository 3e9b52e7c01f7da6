"""Remove ops that do nothing at inference: dropout in eval mode, contiguous, detach."""

from ..rewrite import rewrite_pass

remove_no_ops = rewrite_pass(
    "remove_no_ops", "Replace eval-mode dropout, contiguous and detach by their input.",
    ("""graph(%x, %p, %train):
        %y = aten::dropout(%x, %p, %train)
        return (%y)""", """graph(%x, %p, %train):
        return (%x)"""),
    ("""graph(%x, %p, %train):
        %y = aten::feature_dropout(%x, %p, %train)
        return (%y)""", """graph(%x, %p, %train):
        return (%x)"""),
    ("""graph(%x, %format):
        %y = aten::contiguous(%x, %format)
        return (%y)""", """graph(%x, %format):
        return (%x)"""),
    ("""graph(%x):
        %y = aten::detach(%x)
        return (%y)""", """graph(%x):
        return (%x)"""),
)
