"""The `torch_trt::execute_engine` op: how compiled graphs call an engine, in Python and TorchScript;
`torch_trt::cast_input`, the cast of an input to the dtype its engine holds it in (truncate_long_and_double, int8);
`torch_trt::check_input`, the check of a module input that no engine receives (stitch.py);
`torch_trt::check_default` and `torch_trt::same_float`, the check of an argument compiled at its default
(backend/default_arguments.py); `torch_trt::check_recurrent_states`, the check of an RNN's initial states
(lowering/passes/recurrent_states.py); and
`torch_trt::copy_constant`, the copy of a constant a compiled graph returns (outputs.py)."""

import math

import torch

from ..errors import EngineIOError
from .engine_manager import get_runner

SCHEMA = "execute_engine(Tensor[] inputs, Tensor engine, str engine_id, str target, str device) -> Tensor[]"

_library = torch.library.Library("torch_trt", "DEF")
# Conservative: TorchScript's executor must run every call. Taken for a pure function, a call whose inputs are all
# constants (an engine with no inputs) was folded into one output tensor after two profiled calls, which the callers
# then shared, each call's in-place writes to it reaching the next.
_library.define(SCHEMA, alias_analysis="CONSERVATIVE")


def execute_engine(inputs, engine, engine_id, target, device):
    """Run the engine serialized in `engine` (uint8 tensor) on `inputs`; returns new output tensors."""
    _refuse_gradients(inputs)
    return get_runner(engine_id, engine, target, device)(list(inputs))


_library.impl("execute_engine", execute_engine, "CompositeExplicitAutograd")


def _refuse_gradients(inputs):
    """Compiled modules compute no gradients (their weights are constants): an input requiring grad in grad mode is
    an error, not a result whose backward() silently misses the weights."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
        raise EngineIOError("a compiled module cannot compute gradients, but an input requires grad while grad mode "
                            "is on; call it under torch.no_grad() or torch.inference_mode(), or pass tensors that do "
                            "not require grad (.detach())")


_library.define("cast_input(Tensor x, ScalarType expected, ScalarType dtype, str name) -> Tensor")


def cast_input(x, expected, dtype, name):
    """`x` as `dtype`, once it is checked to have the dtype the module was compiled for: the cast would take any."""
    if x.dtype != expected:
        raise EngineIOError(f"input %{name} has dtype {x.dtype}, but the module was compiled for {expected} there (its "
                            f"Input's dtype); pass {expected}, or compile for {x.dtype}")
    return x.to(dtype)


_library.impl("cast_input", cast_input, "CompositeExplicitAutograd")


# Conservative: the check returns nothing, and TorchScript removes no node with conservative alias analysis.
_library.define("check_input(Tensor x, int[] min_shape, int[] max_shape, ScalarType dtype, str name) -> ()",
                alias_analysis="CONSERVATIVE")


def check_input(x, min_shape, max_shape, dtype, name):
    """Raise EngineIOError unless `x` has `dtype` and a shape within [min_shape, max_shape] (its Input spec), and
    needs no gradient, as an engine's input."""
    _refuse_gradients([x])
    shape = tuple(x.shape)
    if x.dtype != dtype or len(shape) != len(min_shape) or \
            any(not low <= size <= high for low, size, high in zip(min_shape, shape, max_shape)):
        raise EngineIOError(f"input %{name} is a {x.dtype} tensor of shape {shape}, but the module was compiled for "
                            f"{dtype} with shapes from {tuple(min_shape)} to {tuple(max_shape)} (its Input); "
                            "recompile with an Input covering it")


_library.impl("check_input", check_input, "CompositeExplicitAutograd")


_library.define("check_recurrent_states(Tensor input, Tensor[] states, Tensor[] params, int num_layers, "
                "bool bidirectional, bool batch_first, int gates) -> ()", alias_analysis="CONSERVATIVE")


def check_recurrent_states(input, states, params, num_layers, bidirectional, batch_first, gates):
    """Raise RuntimeError, as nn.RNN, nn.LSTM and nn.GRU do, unless each initial state (h, then c) has the shape that
    the input and the weights give it: the layers' `gates` * hidden rows by h's size (params[1], the first
    weight_hh), for num_layers (times two directions) and the input's batch."""
    weight_hh = params[1]
    batch = () if input.dim() == 2 else (input.size(0 if batch_first else 1),)
    layers = num_layers * (2 if bidirectional else 1)
    for index, (state, size) in enumerate(zip(states, (weight_hh.size(1), weight_hh.size(0) // gates))):
        expected = (layers, *batch, size)
        if tuple(state.shape) != expected:
            raise RuntimeError(f"Expected hidden[{index}] size {expected}, got {list(state.shape)}")


_library.impl("check_recurrent_states", check_recurrent_states, "CompositeExplicitAutograd")


_library.define("check_default(bool is_default, str name, str default) -> ()", alias_analysis="CONSERVATIVE")


def check_default(is_default, name, default):
    """Raise EngineIOError unless forward's argument `name`, which no Input stood for, has its default value."""
    if not is_default:
        raise EngineIOError(f"forward's argument {name} was compiled at its default ({default}), as no Input stood for "
                            f"it, and the engines were built for that value only; call the module without {name}, or "
                            f"compile a module whose forward passes the {name} you need itself")


_library.impl("check_default", check_default, "CompositeExplicitAutograd")


_library.define("same_float(float value, float default) -> bool")


def same_float(value, default):
    """Whether `value` is `default` exactly: -0.0 is not 0.0 (x / s tells them apart), and NaN is NaN."""
    if value != value or default != default:
        return value != value and default != default
    return value == default and math.copysign(1.0, value) == math.copysign(1.0, default)


_library.impl("same_float", same_float, "CompositeExplicitAutograd")


# Conservative, as execute_engine: TorchScript's executor folds an aten::clone of a constant into the constant.
_library.define("copy_constant(Tensor x) -> Tensor", alias_analysis="CONSERVATIVE")
_library.impl("copy_constant", lambda x: x.clone(), "CompositeExplicitAutograd")
