"""Reduce conv1d/2d/3d, conv_transpose and convolution to the one aten::_convolution form (an input without its batch
dim gets a unit one, as conv*d gives it)."""

from ..rewrite import insert_int_list, matching_nodes, parse, replace_node, rewrite_pass

_CALL = "aten::_convolution(%{x}, %w, %b, %s, %p, %d, %transposed, %op, %g, %false, %false, %true, %true)"
_FLAGS = """%false : bool = prim::Constant[value=0]()
        %true : bool = prim::Constant[value=1]()
        """

_CONVOLUTION = _FLAGS + f"""%y = {_CALL.format(x="x")}
        return (%y)"""

# conv*d and conv_transpose*d take an input without its batch dim too, which _convolution does not: such an input
# gets a unit batch. Specialization folds the rank check (engines take inputs of one rank), keeping one branch.
_BATCHED_OR_NOT = _FLAGS + f"""%batch_dim : int = prim::Constant[value=0]()
        %rank : int = aten::dim(%x)
        %batched_rank : int = aten::dim(%w)
        %batched : bool = aten::eq(%rank, %batched_rank)
        %y : Tensor = prim::If(%batched)
          block0():
            %y0 = {_CALL.format(x="x")}
            -> (%y0)
          block1():
            %x1 = aten::unsqueeze(%x, %batch_dim)
            %y1 = {_CALL.format(x="x1")}
            %y2 = aten::squeeze(%y1, %batch_dim)
            -> (%y2)
        return (%y)"""

_CONV = ("""graph(%x, %w, %b, %s, %p, %d, %g):
        %transposed : bool = prim::Constant[value=0]()
        %zero : int = prim::Constant[value=0]()
        %op : int[] = prim::ListConstruct(%zero)
        """ + _BATCHED_OR_NOT)

_CONV_TRANSPOSE = ("""graph(%x, %w, %b, %s, %p, %op, %g, %d):
        %transposed : bool = prim::Constant[value=1]()
        """ + _BATCHED_OR_NOT)

_GENERIC = """graph(%x, %w, %b, %s, %p, %d, %transposed, %op, %g):
        """ + _CONVOLUTION

_PAD_WITH_ZEROS = """graph(%x, %pad):
        %zero : int = prim::Constant[value=0]()
        %y = aten::constant_pad_nd(%x, %pad, %zero)
        return (%y)"""

# Scripted modules call conv*d.padding, traced ones _convolution_mode; the arguments are the same.
_STRING_PADDING = ("aten::conv1d.padding", "aten::conv2d.padding", "aten::conv3d.padding", "aten::_convolution_mode")


def explicit_convolution_padding(graph):
    """Rewrite convolutions with padding "valid" or "same" as aten::_convolution with the int padding they compute."""
    for node in [node for op in _STRING_PADDING for node in matching_nodes(graph, op)]:
        padding = _left_and_right(node)
        if padding is None:
            continue
        left, right = padding
        with graph.insert_point_guard(node):
            if left != right:  # eager's extra zero of an odd total: _convolution pads both ends alike
                far_end = [amount for before, after in zip(reversed(left), reversed(right))
                           for amount in (0, after - before)]
                padded = graph.insertGraph(parse(_PAD_WITH_ZEROS), [node.inputsAt(0), insert_int_list(graph, far_end)])
                node.replaceInput(0, padded[0])
            node.replaceInput(4, insert_int_list(graph, left))
        replace_node(graph, node, _CONV)


def _left_and_right(node):
    """(left, right) padding of each spatial dim as PyTorch computes it; None where an argument it takes is not a
    constant (a weight that is not gives no kernel size) or "same" has a stride other than 1, which eager refuses."""
    weight, stride, mode, dilation = (node.inputsAt(i) for i in (1, 3, 4, 5))
    if any(value.node().kind() != "prim::Constant" for value in (weight, stride, mode, dilation)):
        return None
    kernel = weight.toIValue().shape[2:]
    if mode.toIValue() == "valid":
        totals = [0] * len(kernel)
    elif mode.toIValue() == "same" and all(s == 1 for s in stride.toIValue()):
        dilations = dilation.toIValue()
        totals = [d * (k - 1) for d, k in zip(dilations * len(kernel) if len(dilations) == 1 else dilations, kernel)]
    else:
        return None
    return [total // 2 for total in totals], [total - total // 2 for total in totals]


# Only the int[] padding overloads: explicit_convolution_padding rewrites the string ones (padding="same") beforehand.
normalize_convolution = rewrite_pass(
    "normalize_convolution", "Rewrite every convolution form with int[] padding as aten::_convolution.",
    *[(f"aten::conv{n}d", _CONV) for n in (1, 2, 3)],
    *[(op, _CONV_TRANSPOSE) for op in ("aten::conv_transpose1d", "aten::conv_transpose2d.input",
                                       "aten::conv_transpose3d.input")],
    ("aten::convolution", _GENERIC),
)
