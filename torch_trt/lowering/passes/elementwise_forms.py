"""Reduce elementwise variants to the forms the converters take."""

from ..rewrite import rewrite_pass

rsub_to_sub = rewrite_pass(
    "rsub_to_sub", "Rewrite aten::rsub(a, b, alpha) as aten::sub(b, a, alpha).",
    ("""graph(%a, %b, %alpha):
        %y = aten::rsub(%a, %b, %alpha)
        return (%y)""", """graph(%a, %b, %alpha):
        %y = aten::sub(%b, %a, %alpha)
        return (%y)"""),
)
