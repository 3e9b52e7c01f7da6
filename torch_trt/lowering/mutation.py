"""What a node writes: the one place lowering and partitioning ask it."""

import torch


def writes_in_place(node):
    """Whether the node writes to one of its inputs (an in-place op, or a list mutation)."""
    schema = node.schema()
    if schema == "(no schema)":
        return False
    return any(a.alias_info is not None and a.alias_info.is_write for a in torch._C.parse_schema(schema).arguments)
