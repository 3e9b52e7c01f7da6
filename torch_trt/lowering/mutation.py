"""What a node writes: the one place lowering and partitioning ask it."""

import functools

import torch


def writes_in_place(node):
    """Whether the node writes to one of its inputs (an in-place op, or a list mutation)."""
    return bool(written_inputs(node))


def written_inputs(node):
    """The inputs the node's schema marks as written in place (`Tensor(a!)`)."""
    arguments = _arguments(node.schema())
    return [v for a, v in zip(arguments, node.inputs()) if a.alias_info is not None and a.alias_info.is_write]


@functools.lru_cache(maxsize=None)
def _arguments(schema):
    """The arguments of a node's schema text, parsed once per text; none for nodes without one (prim ops)."""
    return () if schema == "(no schema)" else tuple(torch._C.parse_schema(schema).arguments)
