"""Reduce linear, addmm and mm to matmul, t and elementwise ops."""

from ..rewrite import is_constant, is_none, rewrite_pass

unpack_linear = rewrite_pass(
    "unpack_linear", "Rewrite aten::linear as matmul with the transposed weight, plus the bias when there is one.",
    ("aten::linear", """graph(%x, %w, %b):
        %wt = aten::t(%w)
        %y = aten::matmul(%x, %wt)
        return (%y)""", lambda node: is_none(node.inputsAt(2))),
    ("aten::linear", """graph(%x, %w, %b):
        %wt = aten::t(%w)
        %xw = aten::matmul(%x, %wt)
        %one : int = prim::Constant[value=1]()
        %y = aten::add(%xw, %b, %one)
        return (%y)"""),
)

unpack_addmm = rewrite_pass(
    "unpack_addmm", "Rewrite aten::addmm(b, x, w, beta, alpha) as beta * b + alpha * matmul(x, w) (b unread when "
                    "beta is 0, NaN and inf included, as PyTorch's).",
    ("aten::addmm", """graph(%b, %x, %w, %beta, %alpha):
        %xw = aten::matmul(%x, %w)
        %y = aten::mul(%xw, %alpha)
        return (%y)""", lambda node: is_constant(node.inputsAt(3), 0)),
    ("aten::addmm", """graph(%b, %x, %w, %beta, %alpha):
        %xw = aten::matmul(%x, %w)
        %scaled = aten::mul(%xw, %alpha)
        %bias = aten::mul(%b, %beta)
        %one : int = prim::Constant[value=1]()
        %y = aten::add(%scaled, %bias, %one)
        return (%y)"""),
)

_MATMUL = """graph(%a, %b):
        %y = aten::matmul(%a, %b)
        return (%y)"""

# Not aten::bmm: matmul would broadcast a batch of 1 where bmm raises (the converter holds the batches equal).
mm_to_matmul = rewrite_pass("mm_to_matmul", "Rewrite aten::mm as aten::matmul.", ("aten::mm", _MATMUL))
