"""Composite ops with no converter -> PyTorch's decompositions of them, on the dynamo FX graph before tracing.

`decompose(gm, args, settings)` finds the one ATen op each node of the graph dispatches to (running
it on fake copies of `args`, in a graph whose functions name an op of DECOMPOSED), and replaces a node whose op is in DECOMPOSED by a call of that op's
decomposition from `torch._decomp`, so the TorchScript trace records the decomposition's ops. It
does so only when the pipeline would send the op itself to PyTorch (no converter after lowering)
and would convert every op of the decomposition, so the ops we convert (layer_norm, SDPA,
convolution, matmul...) stay whole, a converter added later wins over the decomposition, and a
decomposition never trades one fallback for several. An op the user sent to PyTorch with
`torch_executed_ops` stays whole. The list is explicit: each entry is checked by a test to trace
into ops that compute it for any input (some of PyTorch's decompositions bake values into a trace).
"""

import collections
import copy
import logging
import warnings

import torch
from torch._decomp import get_decompositions
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

from ..lowering import lower
from ..partitioning.support import unsupported_reason
from .torchscript import quiet_torchscript

logger = logging.getLogger(__name__)

aten = torch.ops.aten
DECOMPOSED = get_decompositions([
    aten.addcmul.default, aten.addcdiv.default, aten.rsub.Tensor, aten.baddbmm.default,
    aten.hardswish.default, aten.hardsigmoid.default, aten.mish.default, aten.softplus.default,
    aten.celu.default, aten.threshold.default, aten.hardshrink.default, aten.softshrink.default,
    aten.logit.default, aten.xlogy.Tensor, aten.sinc.default, aten.frac.default,
    aten.deg2rad.default, aten.rad2deg.default,
])
_CONSTANTS = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout, torch.memory_format)
_DECOMPOSED_NAMES = sorted({op._opname for op in DECOMPOSED})  # "addcmul", "rsub", "hardswish", ...


def decompose(gm, args, settings):
    """A copy of `gm` whose nodes that only a decomposition can convert call it; `gm` itself if there are none."""
    if not _may_call_a_decomposed_op(gm):
        return gm
    copied = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    done, replaced = collections.Counter(), {}
    for node, (op, op_args, op_kwargs, metas) in _single_op_calls(copied, args).items():
        if _worth_decomposing(op, op_args, op_kwargs, metas, settings):
            op_args, op_kwargs = torch.fx.node.map_arg((op_args, op_kwargs), lambda n: replaced.get(n, n))
            replaced[node] = _replace(copied.graph, node, DECOMPOSED[op], op_args, op_kwargs)
            done[op.name()] += 1
    if not done:
        return gm
    copied.recompile()
    logger.info("decomposed for conversion: %s", ", ".join(f"{op} x{count}" for op, count in sorted(done.items())))
    return copied


def _may_call_a_decomposed_op(gm):
    """Whether a node of the graph may dispatch to an op of DECOMPOSED, which only running the graph on fake tensors
    tells for sure (a third of a second for a BERT-base): each of those ops is reached from Python through a
    function or method that carries its name (torch.addcmul, F.hardswish, torch.special.logit, Tensor.frac), so a
    graph naming none of them, and calling no module, has none to decompose."""
    for node in gm.graph.nodes:
        if node.op == "call_module":
            return True
        if node.op in ("call_function", "call_method"):
            name = node.target if node.op == "call_method" else getattr(node.target, "__name__", str(node.target))
            if any(op_name in name for op_name in _DECOMPOSED_NAMES):
                return True
    return False


class _OpRecorder(TorchDispatchMode):
    """The ATen ops called while it is active, with their arguments (nested calls are not seen)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args, kwargs or {}))
        return func(*args, **(kwargs or {}))


class _SingleOpFinder(torch.fx.Interpreter):
    """Runs the graph and keeps, per node with only tensor inputs, the one DECOMPOSED op it dispatches to.

    calls: node -> (op, args, kwargs, metas): the op's arguments with each input tensor replaced by the
    FX node that made it, and a meta tensor shaped like each of those nodes' values.
    """

    def __init__(self, gm):
        super().__init__(gm, garbage_collect_values=False)
        self.calls = {}

    def run_node(self, node):
        inputs = {id(self.env[n]): n for n in node.all_input_nodes}
        if node.op not in ("call_function", "call_method") or not all(
                isinstance(self.env[n], torch.Tensor) for n in node.all_input_nodes):
            return super().run_node(node)
        recorder = _OpRecorder()
        with recorder:
            result = super().run_node(node)
        if len(recorder.calls) == 1 and recorder.calls[0][0] in DECOMPOSED:
            op, op_args, op_kwargs = recorder.calls[0]
            try:
                metas = {n: torch.empty(self.env[n].shape, dtype=self.env[n].dtype, device="meta")
                         for n in node.all_input_nodes}
                self.calls[node] = (op, _as_nodes(op_args, inputs), _as_nodes(op_kwargs, inputs), metas)
            except _NotFromGraph:
                pass
        return result


class _NotFromGraph(Exception):
    """An op argument is a tensor the node made itself, or a value an FX graph cannot hold as a constant."""


def _as_nodes(value, inputs):
    """`value` with each tensor replaced by the input node that produced it."""
    if isinstance(value, torch.Tensor):
        if id(value) not in inputs:
            raise _NotFromGraph()
        return inputs[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_as_nodes(v, inputs) for v in value)
    if isinstance(value, dict):
        return {k: _as_nodes(v, inputs) for k, v in value.items()}
    if not isinstance(value, _CONSTANTS):
        raise _NotFromGraph()
    return value


def _single_op_calls(gm, args):
    """_SingleOpFinder.calls of the graph, found on fake copies of `args`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        fakes = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
        finder = _SingleOpFinder(gm)
        try:
            with mode, torch.no_grad():
                finder.run(*fakes)
        except Exception as error:  # a graph fake tensors cannot run (data-dependent ops): compile it undecomposed
            logger.info("no decompositions: the graph cannot run on fake tensors (%s: %s)", type(error).__name__, error)
            return {}
    return finder.calls


def _worth_decomposing(op, op_args, op_kwargs, metas, settings):
    """Whether the pipeline would convert the decomposition of `op` but not `op` itself, and the user allows it."""
    schema = op._schema
    if {schema.name, f"{schema.name}.{schema.overload_name}"} & settings.torch_executed_ops:
        return False
    return (not _all_converted(op, op_args, op_kwargs, metas, settings)
            and _all_converted(DECOMPOSED[op], op_args, op_kwargs, metas, settings))


def _all_converted(function, op_args, op_kwargs, metas, settings):
    """Whether every node of the lowered trace of `function` on the op's arguments (as meta tensors) converts."""
    inputs = list(metas)
    by_node = {node: index for index, node in enumerate(inputs)}

    def call(*tensors):
        return function(*_substitute(op_args, by_node, tensors), **_substitute(op_kwargs, by_node, tensors))

    with quiet_torchscript(), warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        graph = torch.jit.trace(call, tuple(metas[n] for n in inputs), check_trace=False).graph
    lower(graph)
    return all(unsupported_reason(node, settings) is None for node in graph.nodes())


def _substitute(value, by_node, tensors):
    """`value` with each FX node replaced by its tensor in `tensors`."""
    if isinstance(value, torch.fx.Node):
        return tensors[by_node[value]]
    if isinstance(value, (list, tuple)):
        return type(value)(_substitute(v, by_node, tensors) for v in value)
    if isinstance(value, dict):
        return {k: _substitute(v, by_node, tensors) for k, v in value.items()}
    return value


def _replace(graph, node, decomposition, op_args, op_kwargs):
    """Make `node`'s users read a call of `decomposition` on the op's arguments instead; returns that call."""
    with graph.inserting_before(node):
        replacement = graph.call_function(decomposition, tuple(op_args), dict(op_kwargs))
    replacement.meta = dict(node.meta)
    node.replace_all_uses_with(replacement)
    graph.erase_node(node)
    return replacement
