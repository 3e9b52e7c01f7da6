"""The pipeline both front doors share: lower -> partition -> convert and build -> stitch.

`compile_frozen(module, input_specs, settings, device, examples=None)` rewrites the frozen module's forward
graph and returns it as a ScriptModule of its own (`torch.jit.save` writes it as one file).
`build_engines` is everything before stitching, which `explain` shares so both give one answer.
Every engine is built before the graph is stitched, so a failed build leaves the graph as partitioned.
"""

import contextlib
import dataclasses
import io
import logging
import time

import torch

from ..conversion import convert_block
from ..errors import Code, ConversionError, EngineBuildError, LoweringError, Reason, source_line
from ..lowering import lower
from ..lowering.specialize import specialize
from ..partitioning import SegmentKind, analyze, extract_graph, partition
from ..partitioning.support import unmatched_executed_ops
from ..runtime.outputs import copy_returned_constants
from ..runtime.stitch import stitch_engine
from ..targets import resolve_target, start_code_generation, target_name

logger = logging.getLogger(__name__)

_MAX_SPECIALIZATIONS = 8  # each round folds the checks of one more nesting level of branches


def compile_frozen(module, input_specs, settings, device, examples=None):
    """Replace each engine segment of the frozen module's forward by an engine call; return the module.

    `examples` (tensors, one per input) are run first by shape analysis; random data may not suit the model.
    """
    graph = module.graph
    with debug_logging(settings.debug):
        start_code_generation(resolve_target(settings.target, device), device, settings.optimization_level)
        result, built, trt = build_engines(module, input_specs, settings, device, examples)
        for segment, engine_bytes in reversed(built):  # last first: the boundary values of the rest stay in the graph
            stitch_engine(graph, segment, engine_bytes, target_name(trt), device)
        copy_returned_constants(graph)
        torch._C._jit_pass_dce(graph)
        torch._C._jit_pass_lint(graph)
        if settings.debug:
            logger.info("compiled graph:\n%s", graph)
    return _owning_its_code(module)


def _owning_its_code(module):
    """`module` loaded back from its saved bytes: a module that owns its code and constants.

    TorchScript keeps the methods of every scripted, traced and frozen module in one compilation unit for the life
    of the process, so the engines stitched into `module` would outlive every user of it, and so would their
    runners (weights, contexts and CUDA graphs on the device). A loaded module has a compilation unit of its own;
    the original gives up its tensor constants. The engines themselves skip the round trip (for a large model,
    saving and loading them would take seconds): they go out as empty tensors and back in after loading.
    """
    _saveable_bool_scalars(module.graph)
    calls = _engine_calls(module.graph)
    engines = {engine_id: call.inputsAt(1).node().t("value") for engine_id, call in calls}
    for _, call in calls:
        call.inputsAt(1).node().t_("value", torch.empty(0, dtype=torch.uint8))
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    for engine_id, call in _engine_calls(loaded.graph):
        with loaded.graph.insert_point_guard(call):
            call.replaceInput(1, loaded.graph.insertConstant(engines[engine_id]))
    torch._C._jit_pass_dce(loaded.graph)
    for constant in module.graph.findAllNodes("prim::Constant"):
        if constant.output().type().kind() == "TensorType":
            constant.t_("value", torch.empty(0))
    return loaded


def _saveable_bool_scalars(graph):
    """Make each 0-d bool tensor constant (torch.tensor(True), frozen) a uint8 one cast to bool: TorchScript loads such
    a constant back as a Python bool, and the saved module fails its first call (an INTERNAL ASSERT on aten::mul)."""
    for constant in graph.findAllNodes("prim::Constant"):
        value = constant.output().toIValue() if constant.output().type().kind() == "TensorType" else None
        if isinstance(value, torch.Tensor) and value.dtype == torch.bool and value.dim() == 0:
            with graph.insert_point_guard(constant):
                as_bool = graph.insertNode(graph.create("aten::to", [
                    graph.insertConstant(value.to(torch.uint8)), graph.insertConstant(torch.bool),
                    graph.insertConstant(False), graph.insertConstant(False), graph.insertConstant(None)]))
            constant.output().replaceAllUsesWith(as_bool.output().setType(constant.output().type()))
            constant.destroy()


def _engine_calls(graph):
    """(engine id, node) of each torch_trt::execute_engine call in the graph."""
    return [(call.inputsAt(2).toIValue(), call) for call in graph.findAllNodes("torch_trt::execute_engine")]


def build_engines(module, input_specs, settings, device, examples=None):
    """Lower and partition the frozen module's forward, then convert and build each engine segment.

    A node that conversion refuses (or a segment whose engine fails to build) moves to PyTorch and the graph
    is partitioned again, so one unconvertible node never fails the compile nor costs the other engines;
    with require_full_compilation=True the refusal is raised. Returns (Partition, [(segment, engine bytes)],
    target); the report is the one of the final partition, so explain() and compile() agree.
    """
    graph = module.graph
    settings = dataclasses.replace(settings, device=str(device))  # what converters' supports checks resolve to
    lower(graph)
    _refuse_nested_tensors(graph)
    _specialize(graph, input_specs, device, examples)
    if settings.debug:
        logger.info("lowered graph:\n%s", graph)
    _warn_unmatched_executed_ops(graph, settings)
    trt = resolve_target(settings.target, device)
    refused = {}
    while True:
        result = partition(graph, settings, input_specs, device, examples, refused)
        engines = [s for s in result.segments if s.kind == SegmentKind.ENGINE]
        try:
            built = [_build(segment, index, len(engines), settings, trt, device)
                     for index, segment in enumerate(engines, 1)]
            break
        except _Refusal as refusal:
            if settings.require_full_compilation:
                raise refusal.error
            for node in refusal.nodes:
                refused[node] = refusal.error.reason
            logger.warning("%s; %d node(s) run in PyTorch instead, partitioning again", refusal.error,
                           len(refusal.nodes))
    logger.info("%s", result.report)
    _warn_fallbacks(result.report)
    return result, built, trt


def _refuse_nested_tensors(graph):
    """A lowered graph that makes a nested tensor cannot be compiled: engines, and the shape analysis that plans them,
    take dense tensors. nn.TransformerEncoder makes one for a src_key_padding_mask when it runs without grad (lowered,
    so that an encoder built with enable_nested_tensor=False has no such branch left)."""
    for node in graph.findAllNodes("aten::_nested_tensor_from_mask"):
        raise LoweringError(
            f"{node.kind()} at {source_line(node) or '?'} makes a nested tensor, which TensorRT engines cannot take: "
            "nn.TransformerEncoder takes that fast path for a src_key_padding_mask without grad. Build the encoder "
            "with enable_nested_tensor=False (its outputs at padded positions are then computed, where the fast path "
            "returns zeros), or compile with torch.compile(backend=\"tensorrt\"), which takes the same dense path.")


def _specialize(graph, input_specs, device, examples):
    """Fold the metadata checks the inputs decide (lowering/specialize.py), lowering again what the branches taken
    bring in, until none is left."""
    for _ in range(_MAX_SPECIALIZATIONS):
        analysis = lambda: analyze(graph, input_specs, device, examples)  # noqa: E731  (run only when needed)
        if not specialize(graph, analysis, device, not any(spec.is_dynamic for spec in input_specs)):
            return
        lower(graph)


class _Refusal(Exception):
    """The nodes of the partitioned graph to move to PyTorch, and the ConversionError or EngineBuildError why."""

    def __init__(self, nodes, error):
        super().__init__(str(error))
        self.nodes, self.error = nodes, error


def _build(segment, index, count, settings, trt, device):
    start = time.perf_counter()
    logger.info("building engine %d/%d (%d nodes) on the %s target", index, count, len(segment.nodes), target_name(trt))
    graph, origins = extract_graph(segment)
    try:
        engine_bytes = convert_block(graph, segment.input_specs, settings, trt, device)
    except ConversionError as error:
        raise _Refusal([origins[error.node]], error) from error
    except EngineBuildError as error:
        if error.nodes:  # the builder named the layers it refused: their nodes run in PyTorch
            error.reason = Reason(Code.BUILD_REFUSED, str(error))
            raise _Refusal(list(dict.fromkeys(origins[node] for node in error.nodes)), error) from error
        # it named none: the whole segment runs in PyTorch
        ops = sorted({node.kind() if node.schema() == "(no schema)" else f"[{node.schema()}]" for node in segment.nodes})
        refused = EngineBuildError(f"{error} (the engine of {len(segment.nodes)} node(s): {', '.join(ops)})")
        refused.reason = Reason(Code.BUILD_REFUSED, str(error))
        raise _Refusal(segment.nodes, refused) from error
    logger.info("engine %d/%d built in %.2fs", index, count, time.perf_counter() - start)
    return segment, engine_bytes


def _warn_unmatched_executed_ops(graph, settings):
    """Say which torch_executed_ops entries name no node of the lowered graph, whose op names they are matched with:
    they keep nothing in PyTorch."""
    unmatched = unmatched_executed_ops(graph, settings)
    if unmatched:
        logger.warning("torch_executed_ops keeps nothing in PyTorch for %s: no op of the lowered graph has that "
                       "name. Lowering rewrites some ops (aten::linear into aten::matmul and aten::add, aten::conv2d "
                       "into aten::_convolution, a batch norm after a convolution folded into it): name the ops of the "
                       "lowered graph, which debug=True logs", " and ".join(unmatched))


def _warn_fallbacks(report):
    """One warning when nodes run in PyTorch (how many, why, where to see the details), or nothing compiled."""
    if not report.engine_count:
        logger.warning("torch_trt compiled nothing: the whole graph runs in PyTorch (%s); torch_trt.explain(...) "
                       "or debug=True shows which nodes and why", report.reason_counts() or "no convertible node")
    elif report.fallbacks:
        logger.warning("%d node(s) run in PyTorch (%s) around %d engine(s); torch_trt.explain(...) or debug=True "
                       "shows which and why", len(report.fallbacks), report.reason_counts(), report.engine_count)


@contextlib.contextmanager
def debug_logging(enabled):
    """With debug=True, torch_trt's INFO logs are shown for this call even if logging was never configured."""
    package = logging.getLogger(__name__.split(".")[0])
    level, handler = package.level, None
    if enabled and not package.isEnabledFor(logging.INFO):
        package.setLevel(logging.INFO)
    if enabled and not _has_output(package):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("torch_trt %(levelname)s: %(message)s"))
        package.addHandler(handler)
    try:
        yield
    finally:
        package.setLevel(level)
        if handler is not None:
            package.removeHandler(handler)


def _has_output(logger_):
    """Whether records of `logger_` reach a handler that writes somewhere (not only NullHandlers)."""
    while logger_ is not None:
        if any(not isinstance(h, logging.NullHandler) for h in logger_.handlers):
            return True
        logger_ = logger_.parent if logger_.propagate else None
    return False
