"""Rewrite op aliases (aten::multiply, aten::divide, ...) as the ops they stand for, which converters know."""

from ..rewrite import all_nodes

# LibTorch's NormalizeOps table (torch/csrc/jit/passes/normalize_ops.cpp), its rows whose op has a converter. Scripting
# runs it on every graph, tracing on the traced module's own graph only: a traced submodule keeps the aliases it calls.
# In-place aliases need no row: remove_mutation makes multiply_ a multiply, which this pass then rewrites.
ALIASES = {f"aten::{alias}": f"aten::{op}" for alias, op in {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan",
    "arctanh": "atanh", "clip": "clamp", "concat": "cat", "concatenate": "cat", "divide": "div", "fix": "trunc",
    "ger": "outer", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "linalg_matmul": "matmul",
    "multiply": "mul", "negative": "neg", "not_equal": "ne", "special_erf": "erf", "special_expit": "sigmoid",
    "special_expm1": "expm1", "special_log1p": "log1p", "special_log_softmax": "log_softmax",
    "special_logsumexp": "logsumexp", "special_softmax": "softmax", "subtract": "sub", "swapaxes": "transpose",
    "swapdims": "transpose", "true_divide": "div",
}.items()}


def normalize_op_aliases(graph):
    """Replace each node of an op alias by a node of its op on the same inputs, as NormalizeOps does."""
    for node in [n for n in all_nodes(graph.block()) if n.kind() in ALIASES]:
        op = graph.create(ALIASES[node.kind()], list(node.inputs()), node.outputsSize()).insertBefore(node)
        op.copyMetadata(node)
        for old, new in zip(node.outputs(), op.outputs()):
            new.copyMetadata(old)
            old.replaceAllUsesWith(new)
        node.destroy()
