"""The TorchScript front door: torch_trt.compile(module, inputs=[...], **settings)."""

import contextlib
import logging
import warnings

import torch

from .._input import Input, shapes_by_turns
from .._settings import CompileSettings
from ..errors import LoweringError, source_line
from ..lowering.frozen_attributes import fold_frozen_attributes
from ..runtime.stitch import check_inputs_no_engine_receives
from .default_arguments import bind_defaults, check_defaults
from .pipeline import compile_frozen
from .script_check import check_scripted_like_eager
from .tracing import trace_module

logger = logging.getLogger(__name__)


def compile(module, inputs, **options):
    """Compile a ScriptModule or nn.Module; returns a ScriptModule whose forward runs TensorRT engines.

    `inputs` is a list of `torch_trt.Input` or example tensors, one per forward argument (arguments after them are
    compiled at their defaults, and the compiled module refuses a call passing another value for one);
    `options` are CompileSettings fields (unknown names are an error that lists the valid ones).

    An nn.Module is compiled through `torch.jit.script`. When scripting fails, the module is traced
    with the example inputs instead, with a warning: a trace keeps only the ops this run executed,
    so a Python `if` on tensor values would be fixed to the branch the examples took. Such a trace
    is refused with a LoweringError naming the source line, unless `allow_traced_control_flow=True`
    says that branch is right for every input; script the module yourself to keep the `if`.

    The module is compiled in eval mode; the module you pass keeps its own mode (each submodule's
    `training` flag is restored). The result is for inference only: calling it with inputs that
    require grad while grad mode is on is an error (use torch.no_grad() or torch.inference_mode()).
    """
    frozen, specs, settings, device, examples = prepare(module, inputs, options)
    compiled = compile_frozen(frozen, specs, settings, device, examples)
    check_inputs_no_engine_receives(compiled.graph, specs)
    check_defaults(compiled, len(specs))
    return compiled


def prepare(module, inputs, options):
    """Validate the arguments of compile/explain and freeze the module: (frozen, specs, settings, device, examples).

    Engines run where the example tensors are, else where the module's parameters are, else on CUDA when present.
    """
    settings = CompileSettings.from_options(options)
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"torch_trt.compile needs a torch.nn.Module or ScriptModule, got {type(module).__name__}")
    if isinstance(module, torch.jit.ScriptModule) and not hasattr(module, "training"):
        raise TypeError("torch_trt.compile got an already frozen ScriptModule; pass it before torch.jit.freeze "
                        "(compile freezes a copy itself)")
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of torch_trt.Input or example tensors")
    _refuse_embeddings_with_max_norm(module)
    _warn_of_exported_methods(module)
    specs = [i if isinstance(i, Input) else Input.from_tensor(_as_tensor(i)) for i in inputs]
    tensors = [i for i in inputs if isinstance(i, torch.Tensor)]
    device = settings.resolved_device(next((t.device for t in tensors + list(module.parameters())), None))
    examples = [i.to(device) if isinstance(i, torch.Tensor) else i.example("opt", device) for i in inputs]
    other_sizes = [[i.example(which, device) if isinstance(i, Input) else e for i, e in zip(inputs, examples)]
                   for which in ("min", "max") if any(spec.is_dynamic for spec in specs)]
    other_sizes += [[_beside_opt(i).example("opt", device) if isinstance(i, Input) else e
                     for i, e in zip(inputs, examples)]] if other_sizes else []
    unequal_sizes = _min_and_max_by_turns(inputs, examples, device) if other_sizes else None
    with quiet_torchscript(), eval_mode(module):
        scripted = to_script_module(module, examples, settings.allow_traced_control_flow, other_sizes, unequal_sizes)
        _refuse_embedding_calls_with_max_norm(scripted)
        frozen = torch.jit.freeze(scripted, optimize_numerics=False)
    _refuse_python_calls(frozen.graph, type(module).__name__)
    bind_defaults(frozen, len(specs))
    fold_frozen_convolutions(frozen.graph)
    fold_frozen_attributes(frozen)
    return frozen, specs, settings, device, examples


def _warn_of_exported_methods(module):
    """Say that methods marked @torch.jit.export are not in the compiled module, which runs forward only."""
    modifier, export = torch._jit_internal.get_torchscript_modifier, torch._jit_internal.FunctionModifiers.EXPORT
    exported = [name for name in dir(type(module))  # the class's and its bases' methods
                if name != "forward" and modifier(getattr(type(module), name, None)) is export]
    if exported:
        logger.warning("%s's exported methods %s are not in the compiled module: torch_trt compiles forward only. "
                       "Compile a module whose forward calls the one you need", type(module).__name__,
                       ", ".join(exported))


def _refuse_python_calls(graph, name):
    """LoweringError for a graph that calls back into Python: a trace records a torch.autograd.Function's apply as a
    prim::PythonOp, which no engine runs and torch.jit.save cannot write."""
    for node in graph.findAllNodes("prim::PythonOp", True):
        raise LoweringError(f"{name} calls the Python function {node.pyname()} (a torch.autograd.Function), which a "
                            "TorchScript module cannot save and no engine can run: compile with "
                            "torch.compile(model, backend=\"tensorrt\"), which traces through it, or call its "
                            "forward's code instead of the Function")


def _beside_opt(spec):
    """The Input at its opt shape with each dynamic dim one larger (one smaller at its max): what Python computes from
    a size can agree at min, opt and max by chance (x.size(1) % 2 at 2, 4 and 8), less often at neighbouring sizes."""
    shape = tuple(opt + 1 if opt < high else opt - 1 if opt > low else opt
                  for low, opt, high in zip(spec.min_shape, spec.opt_shape, spec.max_shape))
    return Input(shape=shape, dtype=spec.dtype)


def fold_frozen_convolutions(graph):
    """Fold batch norms, additions and scalings of constants into the convolutions they follow, as torch.jit.freeze
    does, but not batch norms into linear layers: PyTorch's fold takes the linear's last dim for the batch norm's
    channels, which holds for 2-D inputs only (a Linear then a BatchNorm1d on [N, C, L] came out wrong)."""
    folds = (torch._C._jit_pass_fold_frozen_conv_bn, torch._C._jit_pass_fold_frozen_conv_add_or_sub,
             torch._C._jit_pass_fold_frozen_conv_mul_or_div)
    while any([fold(graph) for fold in folds]):  # a list: each round runs every fold
        pass


@contextlib.contextmanager
def quiet_torchscript():
    """Silence PyTorch's deprecation warnings for the TorchScript APIs torch_trt is built on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*torch\.jit\.")
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*TorchScript")
        yield


@contextlib.contextmanager
def eval_mode(module):
    """The module in eval mode inside the block; each submodule gets its own `training` flag back after. Say so where
    one was in training mode: the compiled module never runs its training behaviour."""
    modes = [(submodule, submodule.training) for submodule in module.modules()]
    training = [name or type(module).__name__ for name, submodule in module.named_modules() if submodule.training]
    if training:
        logger.warning("%s %s in training mode; torch_trt compiles in eval mode (dropout off, batch norm with its "
                       "running statistics), as inference runs. Call .eval() before compiling", ", ".join(training[:3])
                       + (f" and {len(training) - 3} more" if len(training) > 3 else ""),
                       "is" if len(training) == 1 else "are")
    module.eval()
    try:
        yield
    finally:
        for submodule, training in modes:
            submodule.training = training


def _as_tensor(value):
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"inputs entries must be torch_trt.Input or torch.Tensor, got {type(value).__name__}")
    return value


def _refuse_embeddings_with_max_norm(module):
    """TorchScript compiles F.embedding and F.embedding_bag without the renormalisation that max_norm asks for (eager
    rescales the rows it looks up, in the weight): refuse such a module rather than return rows eager never gives."""
    for name, submodule in module.named_modules():
        kind = getattr(submodule, "original_name", type(submodule).__name__)
        if kind in ("Embedding", "EmbeddingBag") and getattr(submodule, "max_norm", None) is not None:
            raise LoweringError(
                f"{kind} {name or type(module).__name__!r} has max_norm={submodule.max_norm}, whose renormalisation "
                "TorchScript leaves out, so the compiled module would return rows longer than max_norm. Renormalise "
                "the weight once (torch.embedding_renorm_(weight, torch.arange(num_embeddings), max_norm, norm_type) "
                "under torch.no_grad()) and set max_norm=None, or compile with torch.compile(backend=\"tensorrt\").")


def _refuse_embedding_calls_with_max_norm(scripted):
    """The same for a forward that calls F.embedding or F.embedding_bag itself with a max_norm: the scripted call
    (prim::CallFunction, before inlining) is the last place that argument shows."""
    for module in scripted.modules():
        for method in map(module._c._get_method, module._c._method_names()):
            for call in method.graph.findAllNodes("prim::CallFunction"):
                function = call.inputsAt(0).node()
                name = function.s("name") if function.hasAttribute("name") else None
                if name in _MAX_NORM_POSITION and call.inputsAt(_MAX_NORM_POSITION[name]).type().kind() != "NoneType":
                    raise LoweringError(
                        f"F.{name} is called with a max_norm at {source_line(call) or '?'}, whose renormalisation "
                        "TorchScript leaves out, so the compiled module would return rows longer than max_norm. "
                        "Renormalise the weight once "
                        "(torch.embedding_renorm_(weight, torch.arange(weight.size(0)), max_norm, norm_type) under "
                        "torch.no_grad()) and pass max_norm=None, or compile with torch.compile(backend=\"tensorrt\").")


_MAX_NORM_POSITION = {"embedding": 4, "embedding_bag": 4}  # in the call's inputs, after the function itself


def _min_and_max_by_turns(inputs, examples, device):
    """Examples whose dynamic dims take their min and max sizes by turns, across the inputs: sizes unequal where the
    other checked shapes make them equal (x.size(1) / y.size(1) is 1 at min, opt and max of two like Inputs)."""
    specs = [spec for spec in inputs if isinstance(spec, Input)]
    shapes = iter(shapes_by_turns(specs, "min"))
    return [Input(shape=next(shapes), dtype=spec.dtype).example("opt", device) if isinstance(spec, Input) else example
            for spec, example in zip(inputs, examples)]


def to_script_module(module, examples, allow_traced_control_flow, other_sizes=(), unequal_sizes=None):
    """A ScriptModule for `module` (in eval mode): itself, else scripted, else traced with the example inputs (and
    checked to trace the same at `other_sizes`, example lists at the dynamic Inputs' other shapes, and at
    `unequal_sizes` where a trace there runs at all)."""
    if isinstance(module, torch.jit.ScriptModule):
        return module
    try:
        scripted = torch.jit.script(module)
    except Exception as script_error:  # scripting rejects much Python; tracing is the documented fallback
        why = (str(script_error).strip().splitlines() or [type(script_error).__name__])[0]
    else:
        check_scripted_like_eager(module, scripted, examples)
        return scripted
    logger.warning("torch.jit.script failed on %s (%s); tracing it with the example inputs instead, so its Python "
                   "control flow follows the path these inputs take", type(module).__name__, why)
    return trace_module(module, examples, why, allow_traced_control_flow, other_sizes, unequal_sizes)
