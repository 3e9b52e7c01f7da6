"""Lowering passes written as TorchScript IR pattern -> replacement rewrites."""

import torch


def rewrite_pass(name, doc, *rules):
    """A pass `(graph) -> None` applying each (pattern, replacement) IR rewrite in order."""

    def run(graph):
        for pattern, replacement in rules:
            torch._C._jit_pass_custom_pattern_based_rewrite_graph(pattern, replacement, graph)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = doc
    return run
