"""Fold the attribute reads that torch.jit.freeze leaves in a frozen module's forward into constants.

Freezing keeps an attribute whenever LibTorch's alias analysis cannot prove that nothing writes
it: nn.MultiheadAttention's fast-path check puts `in_proj_weight` in lists next to the inputs, so
the frozen graph still reads it from `%self`, which no engine and no shape analysis can take.
Here an attribute is folded when it is a tensor or a plain value that no node of the graph sets
or writes in place, directly or through a view or a container that holds it.
"""

import functools

import torch


def fold_frozen_attributes(module):
    """Replace each prim::GetAttr chain from forward's `self` to an unwritten tensor or plain value by a constant."""
    graph = module.graph
    this = next(graph.inputs())
    set_names = {node.s("name") for node in graph.findAllNodes("prim::SetAttr", True)}
    for node in reversed(graph.findAllNodes("prim::GetAttr", True)):
        path = _path(node, this)
        if path is None or path[-1] in set_names or _written(node.output()):
            continue
        value = functools.reduce(getattr, path, module)
        if isinstance(value, torch.Tensor) or isinstance(value, (bool, int, float, str)) or value is None:
            with graph.insert_point_guard(node):
                constant = graph.insertConstant(value.detach() if isinstance(value, torch.Tensor) else value)
            node.output().replaceAllUsesWith(constant)
    torch._C._jit_pass_dce(graph)


def _path(node, this):
    """The attribute names from `self` to what `node` reads (["a", "in_proj_weight"]), or None if not from `self`."""
    path = []
    while node.kind() == "prim::GetAttr":
        path.insert(0, node.s("name"))
        source = node.inputsAt(0)
        if source is this:
            return path
        node = source.node()
    return None


def _written(value, seen=None):
    """Whether an op writes `value` in place, directly or through what aliases it: views, containers, unpacks."""
    seen = set() if seen is None else seen
    if value in seen:
        return False
    seen.add(value)
    for use in value.uses():
        user, schema = use.user, _schema(use.user)
        if schema is None:  # prim::ListConstruct, TupleUnpack, ...: every output may hold the value
            aliases = list(user.outputs())
        else:
            argument = schema.arguments[min(use.offset, len(schema.arguments) - 1)]  # varargs share the last
            if argument.alias_info is not None and argument.alias_info.is_write:
                return True
            aliases = [output for output, result in zip(user.outputs(), schema.returns) if result.alias_info]
            if argument.alias_info is not None and "*" in argument.alias_info.after_set:  # stored in a container
                aliases += [user.inputsAt(i) for i, other in enumerate(schema.arguments[:user.inputsSize()])
                            if other.alias_info is not None and other.alias_info.is_write]
        if any(_written(alias, seen) for alias in aliases):
            return True
    return False


def _schema(node):
    text = node.schema()
    return None if text == "(no schema)" else torch._C.parse_schema(text)
