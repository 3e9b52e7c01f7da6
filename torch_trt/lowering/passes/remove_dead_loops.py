"""Remove loops whose results are unused, such as the size checks left after their `raise` branch was removed."""

import torch

_PURE_PRIMS = ("prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::ListUnpack",
               "prim::TupleUnpack", "prim::TupleIndex", "prim::If", "prim::Loop")


def _computes_only(block):
    """Whether every node of `block` (and of its nested blocks) only computes values: no writes, raises or prints."""
    for node in block.nodes():
        if node.kind().startswith("prim::"):
            pure = node.kind() in _PURE_PRIMS
        else:
            pure = node.schema() != "(no schema)" and not torch._C.parse_schema(node.schema()).is_mutable
        if not pure or not all(_computes_only(inner) for inner in node.blocks()):
            return False
    return True


def remove_dead_loops(graph):
    """Delete prim::Loop nodes whose results are unused and whose bodies only compute values."""
    torch._C._jit_pass_dce(graph)  # uses by dead nodes (a removed check's comparison) do not keep a loop
    for node in reversed(graph.findAllNodes("prim::Loop", True)):
        if not any(output.uses() for output in node.outputs()) and all(map(_computes_only, node.blocks())):
            node.destroy()
    torch._C._jit_pass_dce(graph)
