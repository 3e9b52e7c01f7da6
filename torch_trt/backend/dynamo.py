"""torch.compile(model, backend="tensorrt"): the dynamo front door.

Registered through the `torch_dynamo_backends` entry point as `tensorrt` and `torch_trt`, so no
import is needed. Dynamo calls `tensorrt_backend(gm, example_inputs, options={...})`:

    signature_of(gm, ...)        which placeholders are user tensors, baked values or sizes
    decompose(gm, ...)           ops with no converter -> PyTorch's decompositions of them, when those convert
    trace_frozen(gm, ...)        FX -> frozen TorchScript of the user tensors, weights as constants
    input_specs(...)             dynamic dims -> Input(min, opt, max)
    engine_cache.lookup / compile_frozen    an equal graph's engines, else the shared pipeline

The returned CompiledGraph runs the compiled module on each call's user tensors (a module that is
one engine call runs that engine straight from Python, runtime/direct_call.py) and rebuilds
when a baked value changed or a dynamic dim left its range; it keeps the engines of a few sets of
baked values, as dynamo gives every instance of a module class the same graph. Since it checks its
baked tensors before every call, it lends them to its engines (engine_manager.lend), which read them in place
of their own copies of equal weights: a model's weights stay on its device once. A graph that
cannot be compiled runs in PyTorch with a warning naming the reason, unless
pass_through_build_failures=True, which raises. Only refusals are caught (torch_trt's errors,
UnsupportedGraph): any other exception is a bug and surfaces, as does a target that cannot be
loaded (target="tensorrt" without TensorRT).
"""

import enum
import logging
import operator
from dataclasses import dataclass
from typing import NamedTuple

import torch

from .._input import SUPPORTED_DTYPES
from .._settings import CompileSettings
from ..errors import ShapeAnalysisError, TorchTRTError
from ..runtime import engine_manager
from ..runtime.direct_call import direct_engine_call
from ..targets import resolve_target
from . import engine_cache
from .decompositions import decompose
from .dynamic_shapes import (alternate_args, halfway_to_opt, input_specs, resized_args, size_values, sizes_of,
                             tied_groups)
from .fx_to_script import tensor_version, trace_frozen, traceable_copy
from .graph_signature import UnsupportedGraph, signature_of
from .graph_text import canonical_text, tensor_constants
from .pipeline import compile_frozen

logger = logging.getLogger(__name__)

MAX_SHAPES = 16  # engines one graph may build when it needs one per input shape
MAX_WEIGHT_SETS = 4  # sets of baked arguments (instances of one module class) whose engines a graph keeps
REFUSALS = (TorchTRTError, UnsupportedGraph)  # why a graph runs in PyTorch; anything else is a bug and raises
_VERSION = operator.attrgetter("_version")


def tensorrt_backend(gm, example_inputs, options=None, mode=None, **kwargs):
    """The dynamo backend: returns a callable with the graph's signature that runs TensorRT engines."""
    settings = CompileSettings.from_options({**(options or {}), **kwargs})
    if mode not in (None, "default"):
        logger.info("torch_trt ignores torch.compile(mode=%r)", mode)
    # a target that cannot load (or run on the inputs' device) is the user's to fix, not a reason to run in PyTorch
    example_device = next((t.device for t in example_inputs if isinstance(t, torch.Tensor)), None)
    resolve_target(settings.target, settings.resolved_device(example_device))
    if settings.debug:
        logger.info("FX graph from dynamo:\n%s", gm.print_readable(print_output=False))
    try:
        _refuse_autocast(gm)
        signature = signature_of(gm, example_inputs)
        if not signature.input_positions or not signature.tensor_outputs:
            logger.info("a graph without tensor inputs or tensor results runs in PyTorch")
            return gm.forward
        args = [_concrete(value) for value in example_inputs]
        compiled = CompiledGraph(gm, signature, settings, args)
        built = compiled.build(args)
    except REFUSALS as error:
        if settings.pass_through_build_failures:
            raise
        logger.warning("torch_trt could not compile a graph of %d nodes; it runs in PyTorch. Reason: %s",
                       len(gm.graph.nodes), _reason(error))
        return gm.forward
    return compiled if built else gm.forward


tensorrt_backend.reset = engine_cache.clear  # torch._dynamo.reset() calls it


def _refuse_autocast(gm):
    """A graph called under autocast, or with autocast regions that turn it on, runs in PyTorch: autocast picks each
    op's dtype as it dispatches, while engines run in the precision they were built for (TorchScript's trace loses
    the regions: a matmul under autocast(enabled=False) ran in bfloat16). Dynamo compiles a graph again when the
    autocast state it is called under changes. A region that turns autocast off, outside autocast, changes nothing
    (transformers' models keep their rotary embeddings in float32 so)."""
    active = [device for device in ("cpu", "cuda") if torch.is_autocast_enabled(device)]
    enabling = [node for node in gm.graph.nodes if node.target is torch.amp.autocast_mode._enter_autocast
                and _enter_autocast_enabled(node)]
    if active or enabling:
        where = f"it is called under {' and '.join(active)} autocast" if active else "it turns autocast on"
        raise UnsupportedGraph(f"{where}, which engines do not follow: they run in the precision they were built for. "
                               "Compile a half-precision model, or pass enabled_precisions, instead of autocast")


def _enter_autocast_enabled(node):
    """Whether an _enter_autocast(device_type, dtype, enabled, cache_enabled) node turns autocast on."""
    enabled = node.args[2] if len(node.args) > 2 else node.kwargs.get("enabled", True)
    return enabled is not False


class Builds(enum.Enum):
    """How a CompiledGraph gets an engine for a call that none of its engines accepts."""

    ONE_ENGINE = "rebuild its one engine, each dynamic dim's range widened to include the call"
    PER_SHAPE = "add an engine for the call's shapes: the trace depends on sizes, or the dynamic build failed"
    STOPPED = "none: a rebuild failed, and such calls run in PyTorch"


class Variant(NamedTuple):
    """An engine-holding module, how to call it, and the (argument position, dim, min, max) ranges of the calls it
    accepts. `call` is the module, or its one engine called directly when the module does nothing else."""

    ranges: list
    module: torch.jit.ScriptModule
    specs: list
    call: object

    def accepts(self, args):
        return all(low <= args[p].shape[d] <= high for p, d, low, high in self.ranges)


class EngineSet(NamedTuple):
    """The variants built for one set of baked arguments (one instance of the module) and those arguments: read
    together, so that a call never checks its arguments against one set and runs another's engine."""

    baked: "BakedArguments | None"
    variants: list


class CompiledGraph:
    """What dynamo calls: the compiled module on the user tensors, rebuilt when its assumptions break.

    current: an EngineSet, whose first variant that accepts a call runs it; `builds` (a Builds) says
    what happens when none does. A dynamic graph starts with ONE_ENGINE; it is traced again with each
    symbol changed, and a different graph means the trace depends on that size, so it goes PER_SHAPE
    (every dynamic dim pinned, up to MAX_SHAPES engines), as it does when its dynamic engine fails to
    build. `shelved`: the EngineSets of other sets of baked arguments (other instances of the module),
    switched to when a call brings theirs.
    """

    def __init__(self, gm, signature, settings, example_args):
        self.gm, self.signature, self.settings = gm, signature, settings
        self.traceable = decompose(traceable_copy(gm, signature.hidden), example_args, settings)
        self.builds, self.current = Builds.ONE_ENGINE, EngineSet(None, [])
        self.shelved = []  # most recently used first
        _warn_of_dropped_gradients(example_args[p] for p in signature.baked_positions)

    def __call__(self, *args):
        current = self.current  # one read: another thread may switch sets while this call runs
        variant = next((v for v in current.variants if v.accepts(args)), None)
        # The engine is called before the baked arguments are checked, so that the check (hundreds of weights) runs
        # while the engine's GPU work does instead of delaying it. Engines only read, so a stale call does no harm:
        # its outputs are dropped and the call runs again on a rebuilt engine.
        outputs = None if variant is None else self._run(variant.call, args)
        if current.baked is not None and current.baked.changed(args):
            current = self._switch_baked(current, args)
            variant = next((v for v in current.variants if v.accepts(args)), None)
            outputs = None if variant is None else self._run(variant.call, args)
        if variant is not None:
            return outputs
        variant = self._rebuild(args)
        return self.gm(*args) if variant is None else self._run(variant.call, args)

    def _switch_baked(self, current, args):
        """Make current, and return, the EngineSet built for the baked arguments of `args`, shelving `current`:
        dynamo gives every instance of a module class one graph, whose weights are its arguments, so a process
        serving two instances alternates between their engines. Sets whose tensors were written since they were
        built are dropped; MAX_WEIGHT_SETS are kept, the least recently used go first."""
        if current.baked.written():
            logger.warning("a weight of a compiled graph was written since its engine was built; rebuilding")
        kept = [engines for engines in [current, *self.shelved] if engines.variants and not engines.baked.written()]
        match = next((k for k, engines in enumerate(kept) if not engines.baked.changed(args)), None)
        if match is not None:
            self.current = kept.pop(match)
        else:
            self.current = EngineSet(BakedArguments.of(self.signature.baked_positions, args), [])
        self.shelved = kept[:MAX_WEIGHT_SETS - 1]
        if match is None and self.shelved:
            logger.info("a compiled graph was called with other weights or baked values (another instance of the "
                        "module?): building engines for them too, up to %d sets", MAX_WEIGHT_SETS)
        return self.current

    def _run(self, call, args):
        return self.signature.pack(call(*[args[p] for p in self.signature.input_positions]), args)

    def build(self, args):
        """Trace, check and compile the graph for these argument values; the Variant built, or None when no engine
        came out."""
        tensors = [args[p] for p in self.signature.input_positions]
        if self.builds is Builds.PER_SHAPE and len(self.current.variants) >= MAX_SHAPES:
            raise UnsupportedGraph(f"the graph already has engines for {MAX_SHAPES} input shapes")
        device = self.settings.resolved_device(tensors[0].device)
        if any(t.device.type != device.type for t in tensors):
            raise UnsupportedGraph(f"inputs on {sorted({str(t.device) for t in tensors})} but engines run on {device}")
        unsupported = sorted({str(t.dtype) for t in tensors if t.dtype not in SUPPORTED_DTYPES})
        if unsupported:
            raise UnsupportedGraph(f"inputs of dtype {', '.join(unsupported)}, which engines do not take")
        empty = [tuple(t.shape) for t in tensors if 0 in t.shape]
        if empty:
            raise UnsupportedGraph(f"an input of shape {empty[0]}: engines take no empty dims")
        if self.builds is Builds.ONE_ENGINE:
            try:
                return self._keep(self._compile_one_engine(args, tensors, device), args)
            except _NeedsPerShape as why:
                logger.warning("%s", why)
                self.builds, self.current = Builds.PER_SHAPE, self.current._replace(variants=[])
        specs = input_specs(self.signature, tensors, self.settings, static=True)
        frozen = trace_frozen(self.traceable, self.signature, args, static_sizes=True)
        return self._keep(self._compile(frozen, specs, device, args), args)

    def _compile_one_engine(self, args, tensors, device):
        """(specs, module) of one engine whose dynamic dims' ranges include this call's and the last engine's."""
        signature, settings = self.signature, self.settings
        previous = self.current.variants[-1].specs if self.current.variants else None
        specs = input_specs(signature, tensors, settings, previous=previous)
        frozen = trace_frozen(self.traceable, signature, args, static_sizes=False)
        if not signature.is_dynamic:
            return self._compile(frozen, specs, device, args)
        min_one = self._symbols_free_down_to_one(frozen, args, specs)  # again at each build: the ranges grow
        if min_one is None:
            raise _NeedsPerShape("a graph traces differently at other input sizes; torch_trt builds one engine per "
                                 "shape")
        specs = input_specs(signature, tensors, settings, previous=previous, min_one=min_one)
        while True:
            try:
                return self._compile(frozen, specs, device, args)
            except TorchTRTError as error:
                # a model's own limit that dynamo's bounds do not know (a position embedding's rows) fails at max
                at_max = isinstance(error, ShapeAnalysisError) and error.which == "max"
                narrower = halfway_to_opt(specs) if at_max else None
                if narrower is None:
                    raise _NeedsPerShape("torch_trt could not build a dynamic-shape engine, so it builds one engine "
                                         f"per input shape. Reason: {_reason(error)}") from error
                logger.info("the graph cannot run at its max shapes %s; trying max shapes halfway to this call's",
                            [spec.max_shape for spec in specs])
                specs = narrower

    def _keep(self, hit, args):
        """Add the (specs, module) built as a variant of the current set (the only one, unless PER_SHAPE), and return
        it; None when there is none."""
        if hit is None:
            logger.info("no part of a graph of %d nodes was converted; it runs in PyTorch", len(self.gm.graph.nodes))
            return None
        specs, module = hit
        variant = Variant(self._ranges(specs), module, specs, direct_engine_call(module) or module)
        variants = self.current.variants + [variant] if self.builds is Builds.PER_SHAPE else [variant]
        self.current = EngineSet(BakedArguments.of(self.signature.baked_positions, args), variants)
        return variant

    def _compile(self, frozen, specs, device, args):
        """(specs, module) from the cache or the pipeline; None when the pipeline converted nothing. A module built
        here is lent the versioned baked tensors, whose every write __call__ sees, and the frozen graph's own
        constants (weights that freezing made, such as a batch norm folded into a convolution), which nothing but
        its engines will hold."""
        lent = BakedArguments.of(self.signature.baked_positions, args).versioned_tensors
        key = engine_cache.cache_key(frozen.graph, self.settings, device, lent=lent)
        hit = engine_cache.lookup(key, specs)
        if hit is not None:  # an entry's wider ranges were checked for its graph's trace, not for this one's
            hit = (specs, hit[1])
        if hit is None:
            if self.settings.debug:
                logger.info("TorchScript graph traced from the FX graph:\n%s", frozen.graph)
            constants = tensor_constants(frozen.graph)  # the pipeline lowers the graph in place
            module = compile_frozen(frozen, specs, self.settings, device)
            if "torch_trt::execute_engine" not in str(module.graph):
                return None
            engine_manager.lend(module, (*lent, *constants))
            hit = (specs, module)
            engine_cache.store(key, *hit, lent)
        return hit

    def _rebuild(self, args):
        """The Variant built for a call none accepted, or None (and no more builds) when none could be."""
        if self.builds is Builds.STOPPED:
            return None
        try:
            variant = self.build(args)
            if variant is not None:
                return variant
        except REFUSALS as error:
            if self.settings.pass_through_build_failures:
                raise
            logger.warning("torch_trt could not rebuild a graph for new inputs; such calls run in PyTorch. "
                           "Reason: %s", _reason(error))
        self.builds = Builds.STOPPED
        return None

    def _symbols_free_down_to_one(self, frozen, args, specs):
        """Trace again with each symbol's dims at other sizes (alternate_args), and at 1: the symbols that may go down
        to 1, or None when a trace at another size differs (the graph depends on that size). Both, since a size-1
        trace alone can match by chance (x * float(x.size(1) % 2) traces the same at 1 and 3, not at 4). Tied symbols
        (tied_groups) move together, by one amount, the smallest of a group to 1."""
        signature, ones, values, sizes = self.signature, set(), size_values(self.gm), sizes_of(self.signature, args)
        for group in tied_groups(signature, sizes):
            others = alternate_args(signature, args, specs, group, values)
            if not others or not all(self._same_trace(frozen, other) for other in others):
                return None
            shift = 1 - min(sizes[symbol] for symbol in group)
            if self._same_trace(frozen, resized_args(signature, args,
                                                     {**sizes, **{symbol: sizes[symbol] + shift for symbol in group}})):
                ones.update(group)
        return ones

    def _same_trace(self, frozen, other_args):
        """Whether tracing with `other_args` (other sizes of the dynamic dims) gives the same graph."""
        if other_args is None:
            return False
        try:
            other = trace_frozen(self.traceable, self.signature, other_args)
        except UnsupportedGraph:
            return False
        return canonical_text(frozen.graph) == canonical_text(other.graph)

    def _ranges(self, specs):
        positions = self.signature.input_positions
        return [(positions[k], d, spec.min_shape[d], spec.max_shape[d]) for k, spec in enumerate(specs)
                for d, expr in enumerate(self.signature.input_dims[k]) if expr is not None]


def _warn_of_dropped_gradients(baked):
    """Say that the results will not require grad where eager's would: grad mode is on and a weight requires grad."""
    if torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in baked):
        logger.warning("grad mode is on and the compiled graph's weights require grad, but TensorRT engines compute "
                       "no gradients: its results will not require grad, and backward() will not reach the weights. "
                       "Call the model under torch.no_grad() or torch.inference_mode() for inference")


class _NeedsPerShape(Exception):
    """Why a dynamic graph cannot have one engine for all its shapes."""


@dataclass(frozen=True)
class BakedArguments:
    """The baked arguments at a build: numbers (0-dim CPU tensors too) by value, tensors by identity and version."""

    values: list  # (position, number)
    tensor_positions: tuple
    tensors: tuple
    versioned_tensors: tuple  # the tensors with a version counter (not inference tensors): every write is a change
    versions: list

    @classmethod
    def of(cls, positions, args):
        tensor_positions = tuple(p for p in positions if _scalar(args[p]) is None)
        tensors = tuple(args[p] for p in tensor_positions)
        versioned = tuple(t for t in tensors if tensor_version(t) is not None)
        return cls([(p, _scalar(args[p])) for p in positions if _scalar(args[p]) is not None], tensor_positions,
                   tensors, versioned, list(map(_VERSION, versioned)))

    def written(self):
        """Whether one of the tensors was written to since the build: these arguments can never come again."""
        return list(map(_VERSION, self.versioned_tensors)) != self.versions

    def changed(self, args):
        """Whether a baked argument is another tensor, was written to, or is another number than at the build."""
        # Every call checks every weight (hundreds of them): loops in C, not Python generators.
        if not all(map(operator.is_, map(args.__getitem__, self.tensor_positions), self.tensors)):
            return True
        if self.written():  # the same tensors, as just checked
            return True
        for position, value in self.values:
            number = _scalar(args[position])
            if number != value and not (number != number and value != value):  # NaN == NaN here
                return True
        return False


def _scalar(value):
    """The number a baked argument holds (a Python number or a 0-dim CPU tensor), else None."""
    if isinstance(value, torch.Tensor):
        return value.item() if value.dim() == 0 and value.device.type == "cpu" else None
    return value


def _concrete(value):
    """The number behind a backed SymInt example input (what dynamo will pass at run time)."""
    if isinstance(value, torch.SymInt) and value.node.hint is not None:
        return value.node.hint
    return value


def _reason(error):
    return str(error) if isinstance(error, UnsupportedGraph) else f"{type(error).__name__}: {error}"
