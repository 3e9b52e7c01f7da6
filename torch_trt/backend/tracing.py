"""Tracing a module that torch.jit.script rejects, refusing a trace whose control flow depends on tensor data.

A trace records the ops one run executes: a Python `if` on a tensor's value keeps only the branch the
example inputs took, and PyTorch says so only through a TracerWarning. Such a trace is refused (a
LoweringError naming the source line) unless allow_traced_control_flow=True. So is one that reads a number out of
a tensor (`x.max().item()`, `float(t)`, `t.tolist()`, another TracerWarning) and records another graph when traced
again on other data of the same shapes: the trace fixed the example's value (a number read from a size, as in
`math.sqrt(x.size(1))`, warns the same but traces the same). PyTorch's other TracerWarnings (loops over a tensor)
are logged at WARNING.

A trace also fixes what Python computes from input sizes (a loop over `range(x.size(1))`, `math.sqrt(x.size(1))`,
`float(x.size(1))`) to the examples' sizes, mostly without a warning. For dynamic Inputs the module is traced again
at their min and max shapes, beside their opt shape and at unequal sizes (torchscript.py), and a trace that differs
is refused.
"""

import linecache
import logging
import warnings

import torch

from ..errors import LoweringError
from . import module_state
from .graph_text import canonical_text
from .script_check import example_copies
from .traced_numbers import restore_returned_numbers

logger = logging.getLogger(__name__)

CONTROL_FLOW_WARNING = "Converting a tensor to a Python boolean"  # PyTorch's TracerWarning for `if tensor:`
VALUE_READ_WARNING = "Converting a tensor to a "  # and for int(t), float(t), t.item(), t.tolist(), t.numpy(), ...


def trace_module(module, examples, why_traced, allow_traced_control_flow, other_sizes=(), unequal_sizes=None):
    """torch.jit.trace of the module on the examples; `why_traced` (the script error) goes into the refusal.
    `other_sizes`: example lists at the dynamic Inputs' other sizes, where the trace must be the same;
    `unequal_sizes`: one more, at sizes the module may not run at (inputs whose sizes must match), checked if it
    traces. The module's attributes and buffers are left as they were (module_state)."""
    eager = _eager_result_refusing_attribute_writes(module, examples, why_traced)
    with module_state.left_as_it_was(module):  # what the traced calls write (swin's window size, as a tensor)
        traced = _checked_trace(module, examples, why_traced, allow_traced_control_flow, other_sizes, unequal_sizes)
    if eager is not None:
        restore_returned_numbers(traced, eager)
    return traced


def _checked_trace(module, examples, why_traced, allow_traced_control_flow, other_sizes, unequal_sizes):
    """trace_module's trace and its checks, which run the module's forward again."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", torch.jit.TracerWarning)  # even where the user silenced them
        torch.jit.TracerWarning.ignore_lib_warnings()  # PyTorch's own modules stay silent, as by default
        try:
            with torch.no_grad():
                traced = torch.jit.trace(module, tuple(examples), check_trace=False)
        except Exception as trace_error:
            raise LoweringError(f"could not script or trace {type(module).__name__}: {_gist(trace_error)}") \
                from trace_error
    tracer_warnings = [w for w in caught if issubclass(w.category, torch.jit.TracerWarning)]
    for w in caught:
        if not issubclass(w.category, torch.jit.TracerWarning):  # not ours to judge: show it as Python would have
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    control_flow = [w for w in tracer_warnings if str(w.message).startswith(CONTROL_FLOW_WARNING)]
    reads = [w for w in tracer_warnings if str(w.message).startswith(VALUE_READ_WARNING)]
    traced_text = canonical_text(traced.inlined_graph)  # what each trace on other examples is held against
    undecided = reads and not control_flow and not allow_traced_control_flow
    if undecided and _reads_example_values(module, traced_text, examples):
        control_flow = reads
    if control_flow and not allow_traced_control_flow:
        raise LoweringError(_control_flow_refusal(type(module).__name__, control_flow, why_traced))
    for w in tracer_warnings:
        logger.warning("tracing %s: %s (at %s)", type(module).__name__, str(w.message).split(". ")[0], _where(w))
    for sized in other_sizes:
        _check_same_trace(module, traced_text, sized, why_traced)
    if unequal_sizes is not None:
        _check_same_trace(module, traced_text, unequal_sizes, why_traced, may_not_run=True)
    return traced


def _gist(error, limit=500):
    """The error's message, or where it runs past `limit` characters (the tracer prints every tensor of a result it
    cannot take before saying why), its last line."""
    text = str(error).strip()
    return text if len(text) <= limit else text.splitlines()[-1].lstrip(":")


def _eager_result_refusing_attribute_writes(module, examples, why_traced):
    """The module's eager result on the examples (None if it fails: the trace then says why), from the first of two
    runs. Refuse a forward that sets attributes a trace would fix at the traced call's values where eager's follow the
    calls: a tensor set by the first run (a value cached on the first call), or any attribute the second run sets
    again (a call counter). One set from sizes alone (swin's window size) traces right. The attributes and
    buffers are put back."""
    try:
        with torch.no_grad(), module_state.left_as_it_was(module) as before:
            eager = module(*example_copies(examples))
            first = module_state.attributes(module)
            module(*example_copies(examples))
            second = module_state.attributes(module)
    except Exception:  # the trace says what fails
        return None
    keys = [key for key in module_state.changed(before, first) if isinstance(first[key], torch.Tensor)]
    keys += [key for key in module_state.changed(first, second) if key not in keys]
    if keys:
        raise LoweringError(
            f"torch.jit.script failed on {type(module).__name__} ({why_traced}), and its forward writes its own "
            f"attributes ({', '.join(sorted(map(module_state.name, keys)))}), which a trace would fix at the traced "
            "call's values where eager's change from call to call: return the new values from forward instead, or "
            "set them before compiling.")
    return eager


def _other_data(examples):
    """Three example lists of the same shapes and dtypes with other values: all positive, all negative (bools all
    true, then all false) and all zero, so `x.max().item() > 0`, `float(x.min())` and `len(x.nonzero())` read other
    numbers in one of them whatever the examples held."""
    def signed(t, sign):
        if t.dtype == torch.bool:
            return torch.full_like(t, sign > 0)
        return sign * (t.abs() + 1)
    others = [[signed(t, sign) if isinstance(t, torch.Tensor) else t for t in examples] for sign in (1, -1)]
    return others + [[torch.zeros_like(t) if isinstance(t, torch.Tensor) else t for t in examples]]


def _trace_text(module, examples):
    """The canonical text of the module's trace on these examples, its TracerWarnings silenced."""
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        return canonical_text(torch.jit.trace(module, tuple(examples), check_trace=False).inlined_graph)


def _reads_example_values(module, traced_text, examples):
    """Whether tracing on other data of the same shapes records another graph: a number the trace read out of a
    tensor was the example's."""
    return any(_traces_otherwise(module, traced_text, other) for other in _other_data(examples))


def _traces_otherwise(module, traced_text, examples):
    try:
        return _trace_text(module, examples) != traced_text
    except Exception:  # the model rejects that data
        return False


def _check_same_trace(module, traced_text, examples, why_traced, may_not_run=False):
    """Refuse the trace unless tracing at these examples' sizes records the same graph (or fails, if it may)."""
    name, shapes = type(module).__name__, [tuple(t.shape) for t in examples]
    try:
        other = _trace_text(module, examples)
    except Exception as error:
        if may_not_run:
            return
        raise LoweringError(f"torch.jit.script failed on {name} ({why_traced}), and tracing it at input shapes "
                            f"{shapes}, in the range of its dynamic Inputs, failed: {error}") from error
    if other != traced_text:
        raise LoweringError(
            f"torch.jit.script failed on {name} ({why_traced}), and tracing it instead fixed what its Python code "
            f"computes from input sizes to the example's sizes: traced at input shapes {shapes} it records another "
            "graph, so a dynamic Input would get silently wrong results at other sizes. Make the module scriptable "
            "(or pass a torch.jit.script'ed module), or compile it for static shapes.")


def _control_flow_refusal(name, control_flow, why_traced):
    lines = "\n".join(f"  - {_where(w)}" for w in control_flow)
    return (f"torch.jit.script failed on {name} ({why_traced}), and tracing it instead fixed Python control flow "
            f"or values that depend on tensor values to the branch or value the example inputs gave, so other "
            f"inputs would get silently wrong results:\n{lines}\n"
            "Make the module scriptable (or pass a torch.jit.script'ed module), or pass "
            "allow_traced_control_flow=True if that branch or value is right for every input (a value read from "
            "a weight).")


def _where(warning):
    """`file:line: source` of the model line a TracerWarning points at."""
    source = linecache.getline(warning.filename, warning.lineno).strip()
    return f"{warning.filename}:{warning.lineno}" + (f": {source}" if source else "")
