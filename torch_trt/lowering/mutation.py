"""What a node writes, reads into a plain value, and what its result views: the one place lowering, partitioning
and stitching ask it."""

import functools

import torch

# Ops that turn tensor data into a plain value. A compile-time value may only come from constants and shapes, so
# these run in PyTorch unless they read a constant: the value an example run saw is not the value of every call.
DATA_READERS = frozenset({
    "aten::Int", "aten::Float", "aten::Bool", "aten::Complex", "aten::item", "aten::tolist", "prim::tolist",
    "aten::ScalarImplicit", "aten::IntImplicit", "aten::FloatImplicit", "aten::ComplexImplicit", "aten::is_nonzero",
    "aten::equal", "aten::allclose",
})


def writes_in_place(node):
    """Whether the node writes to one of its inputs (an in-place op, or a list mutation)."""
    return bool(written_inputs(node))


def written_inputs(node):
    """The inputs the node's schema marks as written in place (`Tensor(a!)`)."""
    arguments = _arguments(node.schema())
    return [v for a, v in zip(arguments, node.inputs()) if a.alias_info is not None and a.alias_info.is_write]


def viewed_input(node):
    """The input whose memory the node's result may share (`Tensor(a) self -> Tensor(a)`: views, reshape, to), or
    None."""
    schema = _parsed(node.schema())
    if schema is None or len(schema.returns) != 1 or schema.returns[0].alias_info is None:
        return None
    shared = schema.returns[0].alias_info.before_set
    return next((v for a, v in zip(schema.arguments, node.inputs())
                 if a.alias_info is not None and not a.alias_info.is_write and a.alias_info.before_set & shared), None)


def _arguments(schema):
    """The arguments of a node's schema text; none for nodes without one (prim ops)."""
    parsed = _parsed(schema)
    return () if parsed is None else tuple(parsed.arguments)


@functools.lru_cache(maxsize=None)
def _parsed(schema):
    """A node's schema text parsed, once per text; None for nodes without one (prim ops)."""
    return None if schema == "(no schema)" else torch._C.parse_schema(schema)
