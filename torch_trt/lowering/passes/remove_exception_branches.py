"""Remove `if cond: raise` checks that scripted modules carry (input-rank asserts and the like)."""


def _only_raises(block):
    kinds = [node.kind() for node in block.nodes()]
    return bool(kinds) and kinds[-1] == "prim::RaiseException" and not list(block.outputs())


def _is_empty(block):
    return not list(block.nodes()) and not list(block.outputs())


def remove_exception_branches(graph):
    """Delete output-less prim::If nodes whose one branch only raises and whose other branch is empty."""
    for node in graph.findAllNodes("prim::If", True):
        blocks = list(node.blocks())
        if node.outputsSize() == 0 and len(blocks) == 2 and any(
                _only_raises(a) and _is_empty(b) for a, b in (blocks, blocks[::-1])):
            node.destroy()
