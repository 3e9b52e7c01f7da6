"""What a node writes: the one place lowering and partitioning ask it."""

import torch


def writes_in_place(node):
    """Whether the node writes to one of its inputs (an in-place op, or a list mutation)."""
    return bool(written_inputs(node))


def written_inputs(node):
    """The inputs the node's schema marks as written in place (`Tensor(a!)`)."""
    schema = node.schema()
    if schema == "(no schema)":
        return []
    arguments = torch._C.parse_schema(schema).arguments
    return [v for a, v in zip(arguments, node.inputs()) if a.alias_info is not None and a.alias_info.is_write]
