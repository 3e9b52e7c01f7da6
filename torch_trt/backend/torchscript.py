"""The TorchScript front door: torch_trt.compile(module, inputs=[...], **settings)."""

import contextlib
import logging
import warnings

import torch

from .._input import Input
from .._settings import CompileSettings
from ..errors import LoweringError
from .pipeline import compile_frozen

logger = logging.getLogger(__name__)


def compile(module, inputs, **options):
    """Compile a ScriptModule or nn.Module; returns a ScriptModule whose forward runs TensorRT engines.

    `inputs` is a list of `torch_trt.Input` or example tensors, one per forward argument;
    `options` are CompileSettings fields (unknown names are an error that lists the valid ones).
    """
    frozen, specs, settings, device, examples = prepare(module, inputs, options)
    return compile_frozen(frozen, specs, settings, device, examples)


def prepare(module, inputs, options):
    """Validate the arguments of compile/explain and freeze the module: (frozen, specs, settings, device, examples).

    Engines run where the example tensors are, else where the module's parameters are, else on CUDA when present.
    """
    settings = CompileSettings.from_options(options)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of torch_trt.Input or example tensors")
    specs = [i if isinstance(i, Input) else Input.from_tensor(_as_tensor(i)) for i in inputs]
    tensors = [i for i in inputs if isinstance(i, torch.Tensor)]
    parameters = list(module.parameters()) if isinstance(module, torch.nn.Module) else []
    device = settings.resolved_device(next((t.device for t in tensors + parameters), None))
    examples = [i.to(device) if isinstance(i, torch.Tensor) else i.example("opt", device) for i in inputs]
    with quiet_torchscript():
        frozen = torch.jit.freeze(to_script_module(module, examples).eval())
    return frozen, specs, settings, device, examples


@contextlib.contextmanager
def quiet_torchscript():
    """Silence PyTorch's deprecation warnings for the TorchScript APIs torch_trt is built on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*torch\.jit\.")
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*TorchScript")
        yield


def _as_tensor(value):
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"inputs entries must be torch_trt.Input or torch.Tensor, got {type(value).__name__}")
    return value


def to_script_module(module, examples):
    """A ScriptModule for `module`: itself, else scripted, else traced with the example inputs."""
    if isinstance(module, torch.jit.ScriptModule):
        return module
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"torch_trt.compile needs a torch.nn.Module or ScriptModule, got {type(module).__name__}")
    module = module.eval()
    try:
        return torch.jit.script(module)
    except Exception as script_error:  # scripting rejects much Python; tracing is the documented fallback
        logger.info("torch.jit.script failed (%s); tracing with the example inputs instead",
                    str(script_error).splitlines()[0])
    try:
        with torch.no_grad():
            return torch.jit.trace(module, tuple(examples), check_trace=False)
    except Exception as trace_error:
        raise LoweringError(f"could not script or trace {type(module).__name__}: {trace_error}") from trace_error
