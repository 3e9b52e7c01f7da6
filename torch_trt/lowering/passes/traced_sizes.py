"""Turn traced size arithmetic back into int arithmetic.

A trace records `x.size(0) * heads` as `aten::mul(prim::NumToTensor(size), heads)` on 0-dim tensors,
read back with `aten::Int` (an int argument), `aten::ScalarImplicit` (a Scalar one, as arange's bounds) or
`aten::Float`. As tensor ops they would look like a read of tensor data to partitioning (and cut the graph at
every reshape); as ints they are compile-time values the evaluators compute. Only sizes, int constants and
+, -, unary -, *, % and division by a positive constant are rewritten (trunc division only of a non-negative
value, where it equals floor division); a read of any other tensor keeps reading tensor data.
"""

import torch

_ARITHMETIC = {"aten::add": "aten::add", "aten::sub": "aten::sub", "aten::rsub": "aten::sub", "aten::mul": "aten::mul",
               "aten::neg": "aten::neg", "aten::floor_divide": "aten::floordiv", "aten::div": "aten::floordiv",
               "aten::remainder": "aten::remainder"}  # torch.remainder and TorchScript's int % both take the
# divisor's sign
_READS = ("aten::Int", "aten::ScalarImplicit", "aten::Float")  # an int is a Scalar; aten::Float converts it


def fold_traced_sizes(graph):
    """Replace each read of size arithmetic on 0-dim tensors by the same arithmetic on ints."""
    reads = [node for kind in _READS for node in graph.findAllNodes(kind, False)]
    for node in reads:
        if node.inputsAt(0).type().kind() != "TensorType":
            continue
        with graph.insert_point_guard(node):
            value = _as_int(graph, node.inputsAt(0))
            if value is not None and node.kind() == "aten::Float":
                value = _insert(graph, "aten::Float", [value], torch._C.FloatType.get())
        if value is not None:
            node.output().replaceAllUsesWith(value)
    torch._C._jit_pass_dce(graph)


def _as_int(graph, value):
    """An int Value equal to the 0-dim tensor `value`, built at the insert point, or None when it is not sizes."""
    node = value.node()
    if node.kind() == "prim::NumToTensor" and node.inputsAt(0).type().kind() == "IntType":
        return node.inputsAt(0)
    if node.kind() == "prim::Constant" and value.type().kind() == "IntType":
        return value
    if node.kind() == "prim::Constant" and value.type().kind() == "TensorType":
        constant = node.t("value")  # toIValue() would give a Python number for a 0-dim tensor
        if constant.dim() == 0 and not constant.is_floating_point() and not constant.is_complex():
            return graph.insertConstant(int(constant))
        return None
    if node.kind() not in _ARITHMETIC or not _plain(node):
        return None
    operands = [_as_int(graph, v) if v.type().kind() == "TensorType" else v for v in list(node.inputs())[:2]]
    if any(o is None or o.type().kind() != "IntType" for o in operands):
        return None
    if node.kind() == "aten::rsub":  # rsub(self, other) is other - self
        operands.reverse()
    if _ARITHMETIC[node.kind()] == "aten::floordiv" and not (_positive_constant(operands[1])
                                                             and (_rounds_down(node) or _nonnegative(operands[0]))):
        return None
    return _insert(graph, _ARITHMETIC[node.kind()], operands, torch._C.IntType.get())


def _insert(graph, kind, operands, result_type):
    """A new `kind` node of `operands` at the insert point; its output, typed `result_type`."""
    node = graph.insertNode(graph.create(kind, operands))
    node.output().setType(result_type)
    return node.output()


def _plain(node):
    """add/sub with alpha 1, div rounding to floor or trunc: the int op computes the same."""
    extra = list(node.inputs())[2:]
    if node.kind() in ("aten::add", "aten::sub", "aten::rsub"):
        return len(extra) == 1 and extra[0].toIValue() == 1
    if node.kind() == "aten::div":
        return len(extra) == 1 and extra[0].toIValue() in ("floor", "trunc")
    return not extra


def _positive_constant(value):
    return value.node().kind() == "prim::Constant" and isinstance(value.toIValue(), int) and value.toIValue() > 0


def _rounds_down(node):
    return node.kind() == "aten::floor_divide" or list(node.inputs())[2].toIValue() == "floor"


def _nonnegative(value):
    """Whether the int Value is a size, a non-negative constant, or a sum, product or quotient of such."""
    node = value.node()
    if node.kind() == "prim::Constant":
        return value.toIValue() >= 0
    if node.kind() in ("aten::size", "aten::add", "aten::mul", "aten::floordiv"):
        return node.kind() == "aten::size" or all(map(_nonnegative, node.inputs()))
    return False
