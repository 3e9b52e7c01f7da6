"""LibTorch's own passes, in one place: inline calls, make ops functional, fold constants, remove dead code."""

import torch


def inline(graph):
    """Inline prim::CallMethod / CallFunction so the graph is one flat function."""
    torch._C._jit_pass_inline(graph)


def remove_mutation(graph):
    """Turn in-place ops into functional ones where no alias observes the difference."""
    torch._C._jit_pass_remove_mutation(graph)


def peephole(graph):
    """LibTorch peepholes, including list idioms (len / getitem of known lists)."""
    torch._C._jit_pass_peephole(graph, True)
    torch._C._jit_pass_peephole_list_idioms(graph, True)


def constant_propagation(graph):
    """Fold nodes whose inputs are all constants, then share equal constants."""
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_constant_pooling(graph)


def eliminate_dead_code(graph):
    """Remove nodes whose results are unused."""
    torch._C._jit_pass_dce(graph)
