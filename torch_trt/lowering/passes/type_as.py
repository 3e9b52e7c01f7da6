"""Rewrite aten::type_as as the aten::to it is."""

from ..rewrite import rewrite_pass

type_as_to_to = rewrite_pass(
    "type_as_to_to", "Rewrite aten::type_as(self, other) as aten::to(self, other): its schema says it returns self where "
                     "the dtypes agree, which type_as's does not, so alias analysis keeps in-place writes through it.",
    ("aten::type_as", """graph(%x, %other):
        %false : bool = prim::Constant[value=0]()
        %none : NoneType = prim::Constant()
        %y = aten::to(%x, %other, %false, %false, %none)
        return (%y)"""),
)
