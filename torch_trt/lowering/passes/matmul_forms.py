"""Reduce linear, addmm, mm and bmm to matmul, t and elementwise ops."""

from ..rewrite import rewrite_pass

unpack_linear = rewrite_pass(
    "unpack_linear", "Rewrite aten::linear as matmul with the transposed weight, plus the bias.",
    ("""graph(%x, %w):
        %b : NoneType = prim::Constant()
        %y = aten::linear(%x, %w, %b)
        return (%y)""", """graph(%x, %w):
        %wt = aten::t(%w)
        %y = aten::matmul(%x, %wt)
        return (%y)"""),
    ("""graph(%x, %w, %b):
        %y = aten::linear(%x, %w, %b)
        return (%y)""", """graph(%x, %w, %b):
        %wt = aten::t(%w)
        %xw = aten::matmul(%x, %wt)
        %one : int = prim::Constant[value=1]()
        %y = aten::add(%xw, %b, %one)
        return (%y)"""),
)

unpack_addmm = rewrite_pass(
    "unpack_addmm", "Rewrite aten::addmm(b, x, w, beta, alpha) as beta * b + alpha * matmul(x, w).",
    ("""graph(%b, %x, %w, %beta, %alpha):
        %y = aten::addmm(%b, %x, %w, %beta, %alpha)
        return (%y)""", """graph(%b, %x, %w, %beta, %alpha):
        %xw = aten::matmul(%x, %w)
        %scaled = aten::mul(%xw, %alpha)
        %bias = aten::mul(%b, %beta)
        %one : int = prim::Constant[value=1]()
        %y = aten::add(%scaled, %bias, %one)
        return (%y)"""),
)

mm_to_matmul = rewrite_pass(
    "mm_to_matmul", "Rewrite aten::mm and aten::bmm as aten::matmul.",
    ("""graph(%a, %b):
        %y = aten::mm(%a, %b)
        return (%y)""", """graph(%a, %b):
        %y = aten::matmul(%a, %b)
        return (%y)"""),
    ("""graph(%a, %b):
        %y = aten::bmm(%a, %b)
        return (%y)""", """graph(%a, %b):
        %y = aten::matmul(%a, %b)
        return (%y)"""),
)
