"""The converter test harness: compile a function with full compilation, check converters, compare with eager.

    check_converter(lambda x: torch.relu(x), [torch.randn(2, 3)], {"aten::relu"}, device)

The function is wrapped in a module and compiled through the public API on the reference
target with require_full_compilation=True; the run must use every converter named in
`converters`, and the outputs must match eager PyTorch within the tolerance of their dtype.
"""

import torch

import torch_trt
from torch_trt.conversion.interpreter import record_converted

TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2)}


class _Function(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *inputs):
        return self.function(*inputs)


def check_converter(function, inputs, converters, device, rtol=None, atol=None, **settings):
    """Compile `function` (or module) for `inputs`, assert `converters` ran and outputs match eager."""
    module = function if isinstance(function, torch.nn.Module) else _Function(function)
    module = module.to(device).eval()
    inputs = [t.to(device) for t in inputs]
    settings = {"target": "reference", "require_full_compilation": True, "min_block_size": 1, **settings}
    with record_converted() as converted:
        compiled = torch_trt.compile(module, inputs=inputs, **settings)
    missing = set(converters) - set(converted)
    assert not missing, f"converters {sorted(missing)} did not run; converted: {sorted(set(converted))}"
    assert "torch_trt::execute_engine" in str(compiled.graph), "the compiled graph calls no engine"
    with torch.no_grad():
        expected, actual = module(*inputs), compiled(*inputs)
    for want, got in zip(_flatten(expected), _flatten(actual)):
        assert got.dtype == want.dtype, f"dtype {got.dtype} != eager {want.dtype}"
        assert got.shape == want.shape, f"shape {tuple(got.shape)} != eager {tuple(want.shape)}"
        default_rtol, default_atol = TOLERANCES.get(want.dtype, (0, 0))
        torch.testing.assert_close(got, want, rtol=rtol or default_rtol, atol=atol or default_atol, equal_nan=True)
    return compiled


def make_input(spec, dtype, low=-9, high=9):
    """A test input: `spec` itself when it is a tensor, else random data of that shape (ints in [low, high))."""
    if isinstance(spec, torch.Tensor):
        return spec
    if dtype == torch.bool:
        return torch.rand(spec) > 0.5
    if dtype.is_floating_point:
        return torch.randn(spec).to(dtype)
    return torch.randint(low, high, spec, dtype=dtype)


def _flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for item in value for t in _flatten(item)]
