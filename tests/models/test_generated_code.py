"""Zoo models through the reference builder's code generator (inductor, optimization_level >= 4 on CPU)."""

import pytest
import torch

import torch_trt
from zoo import build


@pytest.mark.parametrize("name", ["gpt2"])
def test_generated_engine_matches_eager(name):
    """GPT-2's attention made the generated program view an expanded operand whose strides inductor saw otherwise."""
    model, inputs = build(name)
    compiled = torch_trt.compile(model, inputs=inputs, target="reference", allow_traced_control_flow=True,
                                 optimization_level=5, require_full_compilation=True)
    with torch.no_grad():
        expected, actual = model(*inputs), compiled(*inputs)
    expected = expected[0] if isinstance(expected, (tuple, list)) else getattr(expected, "logits", expected)
    actual = actual[0] if isinstance(actual, (tuple, list)) else actual
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
