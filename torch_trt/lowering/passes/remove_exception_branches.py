"""Remove `if cond: raise` checks that scripted modules carry (input-rank asserts and the like), also where the If
gives values (`b if b is None or b.shape == (E,) else raise`, in F.multi_head_attention_forward, gives b back)."""


def _only_raises(block):
    kinds = [node.kind() for node in block.nodes()]
    return bool(kinds) and kinds[-1] == "prim::RaiseException"


def _passes_through(block):
    """Whether the block runs nothing: it gives the If its outputs (values made before it) or none."""
    return not list(block.nodes())


def remove_exception_branches(graph):
    """Replace each prim::If whose one branch only raises, and whose other runs nothing, by that other's outputs."""
    for node in reversed(graph.findAllNodes("prim::If", True)):  # nested Ifs first: their parents may contain them
        blocks = list(node.blocks())
        for raising, other in (blocks, blocks[::-1]):
            if _only_raises(raising) and _passes_through(other):
                for output, value in zip(list(node.outputs()), list(other.outputs())):
                    output.replaceAllUsesWith(value)
                node.destroy()
                break
