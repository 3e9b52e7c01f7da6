"""Lowering: TorchScript IR passes that leave a small, functional opset for the converters.

PASSES is the pipeline, top to bottom. `lower(graph)` runs each pass in place and logs the
graph after it at DEBUG level under the pass name.
"""

import logging

import torch

from . import builtin
from .passes.convolution_forms import explicit_convolution_padding, normalize_convolution
from .passes.fold_constant_regions import fold_constant_regions
from .passes.functional_in_place import remove_mutation_keeping_dtypes
from .passes.list_comprehensions import fold_list_comprehensions
from .passes.fused_attention import lower_fused_attention
from .passes.matmul_forms import mm_to_matmul, unpack_addmm, unpack_linear
from .passes.op_aliases import normalize_op_aliases
from .passes.recurrent_states import guard_recurrent_states
from .passes.remove_dead_loops import remove_dead_loops
from .passes.remove_exception_branches import remove_exception_branches
from .passes.remove_no_ops import remove_no_ops, view_to_reshape
from .passes.traced_sizes import fold_traced_sizes
from .passes.type_as import type_as_to_to

logger = logging.getLogger(__name__)

PASSES = [
    builtin.inline,
    type_as_to_to,  # before remove_mutation, which would drop a write through type_as's result
    remove_mutation_keeping_dtypes,
    normalize_op_aliases,  # after remove_mutation, which makes in-place aliases (multiply_) functional ones
    lower_fused_attention,
    remove_exception_branches,
    guard_recurrent_states,  # the checks of nn.LSTM's forward that remove_exception_branches dropped
    remove_dead_loops,
    fold_list_comprehensions,
    remove_no_ops,
    view_to_reshape,
    fold_traced_sizes,
    explicit_convolution_padding,  # before normalize_convolution, which takes the int[] padding it gives
    normalize_convolution,
    unpack_linear,
    unpack_addmm,
    mm_to_matmul,
    builtin.peephole,
    builtin.constant_propagation,
    fold_constant_regions,
    builtin.eliminate_dead_code,
]


def lower(graph):
    """Run every pass of PASSES on `graph`, in place."""
    for lowering_pass in PASSES:
        lowering_pass(graph)
        torch._C._jit_pass_lint(graph)
        logger.debug("after %s:\n%s", lowering_pass.__name__, graph)
