"""Einstein summation: aten::einsum as one IEinsumLayer.

TensorRT's einsum takes one or two float operands of one dtype and an equation of lowercase
labels, with no ellipsis and no label repeated within one operand (a diagonal). PyTorch's
equations may also use uppercase labels (torchvision's MaxViT writes "B G H I D, B G H J D ->
B G H I J"), spaces and an implicit output: the converter writes the same summation in TensorRT's
form (output explicit, uppercase labels renamed to free lowercase ones), and `supports` sends
every equation without such a form to PyTorch. Products of two operands run in the reduced
precision enabled_precisions allows, as matmul does.
"""

import string
from collections import Counter

from ..conversion.registry import converter
from ._helpers import cast, compute_dtype, promote_types, to_itensor

_MAX_OPERANDS = 2  # TensorRT's IEinsumLayer takes one or two inputs


def _implicit_output(terms):
    """PyTorch's output for an equation without '->': the labels used once, uppercase before lowercase."""
    counts = Counter("".join(terms))
    return "".join(sorted(label for label, count in counts.items() if count == 1))


def _lowercase(labels):
    """{label: lowercase label}: lowercase labels keep theirs, an uppercase one takes its own lowercase letter
    when that is free, else the first free letter."""
    renamed = {label: label for label in labels if label.islower()}
    for label in sorted(set(labels) - set(renamed)):
        taken = set(renamed.values())
        renamed[label] = next(c for c in label.lower() + string.ascii_lowercase if c not in taken)
    return renamed


def tensorrt_equation(equation):
    """PyTorch's einsum `equation` as TensorRT's IEinsumLayer takes it, or None where TensorRT cannot express it."""
    lhs, arrow, output = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    labels = "".join(terms)
    if not all(c.isascii() and c.isalpha() for c in labels + output):
        return None  # an ellipsis
    if len(terms) > _MAX_OPERANDS or any(len(set(term)) != len(term) for term in terms):
        return None  # more operands than TensorRT takes, or a diagonal
    if len(set(labels)) > len(string.ascii_lowercase):
        return None
    output = output if arrow else _implicit_output(terms)
    return f"{','.join(terms)}->{output}".translate(str.maketrans(_lowercase(labels + output)))


def _expressible(node, settings):
    """A constant equation over a list of one or two operands that TensorRT's einsum can express."""
    equation = node.namedInput("equation").toIValue()
    operands = node.namedInput("tensors").node()
    return (isinstance(equation, str) and operands.kind() == "prim::ListConstruct"
            and 1 <= operands.inputsSize() <= _MAX_OPERANDS and tensorrt_equation(equation) is not None)


@converter("aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor", supports=_expressible)
def einsum(ctx, node, args):
    """torch.einsum over float operands as one IEinsumLayer (the contraction order `path` is TensorRT's to pick)."""
    values = args["tensors"].value
    dtype = promote_types(ctx, *values)
    if not dtype.is_floating_point:
        raise TypeError(f"TensorRT's einsum takes float operands, got {dtype}")
    compute = compute_dtype(ctx, dtype) if len(values) == _MAX_OPERANDS else dtype
    operands = [to_itensor(ctx, value, compute) for value in values]
    layer = ctx.net.add_einsum(operands, tensorrt_equation(args["equation"].to_str()))
    return ctx.set_output(node, [cast(ctx, layer.get_output(0), dtype)])
