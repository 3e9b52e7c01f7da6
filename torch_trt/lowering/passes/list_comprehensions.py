"""Fold `[value for _ in range(n)]` of a known n into one list: F.interpolate builds its scale factors so.

TorchScript compiles such a comprehension to an empty list and a prim::Loop appending to it; constant propagation
leaves a loop that writes a list, so the loop stays and the partitioner keeps it in PyTorch, with the op reading the
list (nn.Upsample's resize) beside it. Once n is a constant (written so, or a rank that specialization folded), the
loop appends the same value n times: the list of n copies of it.
"""

import torch


def fold_list_comprehensions(graph):
    """Replace each top-level loop of a constant count that only appends one outer value to a new list by that list."""
    for loop in graph.findAllNodes("prim::Loop", False):
        folded = _repeated_append(loop)
        if folded is not None:
            _fold(graph, loop, *folded)


def _repeated_append(loop):
    """(the list, the value, the count) of a loop `for _ in range(count): list.append(value)` over a list made empty
    just before it, else None."""
    count, condition = loop.inputsAt(0).toIValue(), loop.inputsAt(1).toIValue()
    body = next(loop.blocks())
    nodes = list(body.nodes())
    if not isinstance(count, int) or condition is not True or loop.outputsSize() or len(nodes) != 1:
        return None
    append = nodes[0]
    if append.kind() != "aten::append" or body.returnNode().inputsAt(0).toIValue() is not True:
        return None
    made, value = append.inputsAt(0), append.inputsAt(1)
    empty = made.node().kind() == "prim::ListConstruct" and not made.node().inputsSize()
    earlier_uses = [use for use in made.uses() if use.user is not append and not use.user.isAfter(loop)]
    if not empty or earlier_uses or value.node().owningBlock() is body:
        return None
    return made, value, max(count, 0)


def _fold(graph, loop, made, value, count):
    with graph.insert_point_guard(loop):
        listed = graph.insertNode(graph.create("prim::ListConstruct", [value] * count))
    listed.output().setType(made.type())
    loop.destroy()
    made.replaceAllUsesWith(listed.output())
    made.node().destroy()
