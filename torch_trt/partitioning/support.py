"""Whether a node can run in an engine: the registries are the only source of truth."""

from ..conversion.registry import find_converter, find_evaluator, schema_key

# Nodes that only pack a graph's results; they stay in PyTorch and never need converting.
OUTPUT_PACKING = {"prim::TupleConstruct", "prim::ListConstruct", "prim::DictConstruct"}


def op_names(node):
    """The names a user may give in torch_executed_ops for this node: kind, and kind.overload."""
    key = schema_key(node)
    names = {node.kind()}
    if key and key[1]:
        names.add(f"{key[0]}.{key[1]}")
    return names


def unsupported_reason(node, settings):
    """None when the node can be converted, else why not (for the fallback report)."""
    if op_names(node) & settings.torch_executed_ops:
        return "sent to PyTorch by torch_executed_ops"
    registration = find_converter(node) or find_evaluator(node)
    if registration is None:
        return "no converter or evaluator for this schema"
    if registration.supports is not None and not registration.supports(node, settings):
        return "the converter does not support these arguments"
    return None
