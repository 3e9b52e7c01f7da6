"""Assertions on lowered TorchScript graphs, shared by the lowering tests."""

from torch.testing import FileCheck


def assert_ops(graph, present, absent):
    """Each of `present` appears in the graph's text, in order, and none of `absent` does."""
    check = FileCheck()
    for op in present:
        check = check.check(op)
    for op in absent:
        check = check.check_not(op)
    check.run(str(graph))
