"""The converter test harness: compile a case scripted and traced, check converters, compare with eager.

    check_converter(lambda x: torch.relu(x), [torch.randn(2, 3)], {"aten::relu"}, device)

The case (a lambda, a function or an nn.Module) becomes a ScriptModule twice: through torch.jit.script
(a lambda is rebuilt from its own source as a module's forward, since TorchScript cannot script lambdas;
any other function is called from a generated forward) and through torch.jit.trace. Each is compiled
through the public API on the reference target with require_full_compilation=True; each compile must use
every converter named in `converters` (or in `converters[how]` for a dict {"scripted": ..., "traced": ...},
where scripting and tracing record different ops), and its outputs must match eager PyTorch in structure
(number of outputs), dtype, shape and values within the tolerance of their dtype. A case TorchScript cannot
script is written `trace_only(case, reason)`; `trace_only(case, reason, scripted_error=...)` marks a known bug
in the scripted compile, asserted to still raise that error so the marker goes when the bug is fixed. `specs` (torch_trt.Input, one per input) replace the example tensors
as compile-time inputs: a dynamic-shape case compiles for min/opt/max and runs `inputs` of another shape.
"""

import ast
import functools
import linecache
from dataclasses import dataclass

import pytest
import torch

import torch_trt
from converted_ops import record_converted

TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2)}


@dataclass(frozen=True)
class TraceOnly:
    """A case that TorchScript cannot script; `reason` says why, and the harness only traces it."""

    case: object
    reason: str
    scripted_error: str = None


def trace_only(case, reason, scripted_error=None):
    """Mark `case` as traced only, for the stated `reason`; `scripted_error`: the error its scripted compile gives."""
    if not reason:
        raise ValueError("trace_only needs the reason the case cannot be scripted")
    return TraceOnly(case, reason, scripted_error)


class FunctionModule(torch.nn.Module):
    """A module whose forward is `function`."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *inputs):
        return self.function(*inputs)


def check_converter(function, inputs, converters, device, rtol=None, atol=None, specs=None, **settings):
    """Compile the case scripted and traced for `inputs` (or `specs`); assert `converters` ran and outputs match eager.

    Returns the scripted compile (the traced one for a trace_only case).
    """
    case = function.case if isinstance(function, TraceOnly) else function
    module = (case if isinstance(case, torch.nn.Module) else FunctionModule(case)).to(device).eval()
    inputs = [t.to(device) for t in inputs]
    examples = _examples(inputs, specs, device)
    settings = {"target": "reference", "require_full_compilation": True, "min_block_size": 1, "device": device,
                "inputs": specs or inputs, **settings}
    # Float32 in full precision, as engines compute it with PyTorch's TF32 switches off (conftest.py).
    with torch.no_grad(), torch.backends.cudnn.flags(allow_tf32=False):
        expected = module(*inputs)
    if isinstance(function, TraceOnly) and function.scripted_error:
        with pytest.raises(Exception, match=function.scripted_error):
            torch_trt.compile(scripted(case, len(examples)).to(device), **settings)
    compiled = []
    for how, script_module in _script_modules(function, module, examples):
        wanted = converters[how] if isinstance(converters, dict) else converters
        compiled.append(_check_compiled(how, script_module, settings, wanted, inputs, expected, rtol, atol))
    return compiled[0]


def _script_modules(function, module, examples):
    """(how, ScriptModule) pairs: scripted unless the case is trace_only, and traced."""
    if not isinstance(function, TraceOnly):
        yield "scripted", scripted(function, len(examples)).to(examples[0].device)
    with torch.no_grad():
        yield "traced", torch.jit.trace(module, tuple(examples), check_trace=False)


def _check_compiled(how, script_module, settings, converters, inputs, expected, rtol, atol):
    """Compile one ScriptModule of the case and check it against eager's `expected` outputs."""
    with record_converted() as converted:
        compiled = torch_trt.compile(script_module, **settings)
    missing = set(converters) - set(converted)
    assert not missing, f"{how}: converters {sorted(missing)} did not run; converted: {sorted(set(converted))}"
    assert "torch_trt::execute_engine" in str(compiled.graph), f"{how}: the compiled graph calls no engine"
    with torch.no_grad():
        actual = compiled(*inputs)
    _assert_matches(actual, expected, rtol, atol, how)
    return compiled


def _examples(inputs, specs, device):
    """The tensors to script-check and trace with: `inputs`, or the opt shape of each spec for a dynamic case."""
    if specs is None:
        return inputs
    assert len(specs) == len(inputs), f"{len(specs)} specs for {len(inputs)} inputs"
    for spec, tensor in zip(specs, inputs):
        assert spec.dtype == tensor.dtype, f"spec dtype {spec.dtype} != input dtype {tensor.dtype}"
        assert all(lo <= d <= hi for lo, d, hi in zip(spec.min_shape, tensor.shape, spec.max_shape)), \
            f"input shape {tuple(tensor.shape)} outside spec {spec}"
    assert any(s.is_dynamic and tuple(t.shape) != s.opt_shape for s, t in zip(specs, inputs)), \
        "a dynamic-shape case must run at a shape other than opt"
    return [spec.example("opt", device) for spec in specs]


def _assert_matches(actual, expected, rtol, atol, how, where="output"):
    """Same structure (tuples/lists of the same length), then same dtype, shape and values for every tensor."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{how}: {where} is {type(actual).__name__}, eager gives a tensor"
        assert actual.dtype == expected.dtype, f"{how}: {where} dtype {actual.dtype} != eager {expected.dtype}"
        assert actual.shape == expected.shape, \
            f"{how}: {where} shape {tuple(actual.shape)} != eager {tuple(expected.shape)}"
        default_rtol, default_atol = TOLERANCES.get(expected.dtype, (0, 0))
        torch.testing.assert_close(actual, expected, rtol=default_rtol if rtol is None else rtol,
                                   atol=default_atol if atol is None else atol,
                                   equal_nan=True, msg=lambda text: f"{how}: {where}: {text}")
        return
    assert isinstance(expected, (list, tuple)), f"eager {where} is a {type(expected).__name__}, not tensors"
    assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), \
        f"{how}: {where} is {_describe(actual)}, eager gives {len(expected)} outputs"
    for index, (got, want) in enumerate(zip(actual, expected)):
        _assert_matches(got, want, rtol, atol, how, f"{where}[{index}]")


def _describe(value):
    return f"{len(value)} outputs" if isinstance(value, (list, tuple)) else f"one {type(value).__name__}"


def scripted(case, arity):
    """torch.jit.script of the case: a module as it is, else a generated module whose forward computes it."""
    if isinstance(case, torch.nn.Module):
        return torch.jit.script(case)
    if getattr(case, "__name__", None) == "<lambda>":
        params, body, namespace, where = _lambda_parts(case)
    else:
        params = ", ".join(f"x{i}" for i in range(arity))
        body, namespace, where = f"function({params})", {"function": case}, getattr(case, "__name__", "case")
    source = f"def forward(self, {params}):\n    return {body}\n"
    filename = f"<scripted {where}>"  # TorchScript reads the source back through linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return torch.jit.script(type("Case", (torch.nn.Module,), {"forward": namespace["forward"]})())


def _lambda_parts(function):
    """(parameters, body source, namespace, location) of a lambda, found in its file's syntax tree."""
    code = function.__code__
    where = f"lambda at {code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    names = list(code.co_varnames[:code.co_argcount])
    found = [node for node in ast.walk(_syntax_tree(code.co_filename))
             if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and [a.arg for a in node.args.args] == names]
    if len(found) != 1:
        raise ValueError(f"cannot tell which lambda the {where} is: write it on a line of its own")
    closure = dict(zip(code.co_freevars, (cell.cell_contents for cell in function.__closure__ or ())))
    namespace = {**function.__globals__, **closure}
    return ast.unparse(found[0].args), ast.unparse(found[0].body), namespace, where


@functools.lru_cache(maxsize=None)
def _syntax_tree(filename):
    with open(filename) as file:
        return ast.parse(file.read(), filename)


def converted_layers(function, *specs):
    """The reference network's layers that `function` (scripted) converts to, for `specs` (torch_trt.Input)."""
    import torch_trt.targets.reference as trt
    from torch_trt._settings import CompileSettings
    from torch_trt.conversion.context import ConversionCtx
    from torch_trt.conversion.interpreter import convert_graph
    from torch_trt.targets.target_logger import target_logger

    ctx = ConversionCtx(trt, trt.Builder(target_logger(trt)), CompileSettings(target="reference"))
    convert_graph(ctx, torch.jit.script(function).graph, list(specs))
    return list(ctx.net.definition)


def dynamic_inputs(ranges, dtype, low=-9, high=9):
    """(specs, tensors) for rows of (min, opt, max, run) shapes: compile for min..max, run at `run`."""
    specs = [torch_trt.Input(min_shape=lo, opt_shape=opt, max_shape=hi, dtype=dtype) for lo, opt, hi, _ in ranges]
    return specs, [make_input(run, dtype, low, high) for *_, run in ranges]


def make_input(spec, dtype, low=-9, high=9):
    """A test input: `spec` itself when it is a tensor, else random data of that shape (ints in [low, high))."""
    if isinstance(spec, torch.Tensor):
        return spec
    if dtype == torch.bool:
        return torch.rand(spec) > 0.5
    if dtype.is_floating_point:
        return torch.randn(spec).to(dtype)
    return torch.randint(low, high, spec, dtype=dtype)
