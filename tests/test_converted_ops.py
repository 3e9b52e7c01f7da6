"""record_converted (converted_ops.py) sees the converters that ran inside its block, and only changes dispatch there."""

import torch

import torch_trt
from converted_ops import record_converted
from torch_trt.conversion import interpreter, registry


def _compile(module, x):
    return torch_trt.compile(module, inputs=[x], target="reference", min_block_size=1, require_full_compilation=True)


class ReluTimesSize(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * x.size(0)  # aten::size and the constants are evaluated, not converted


def test_records_converters_in_order_and_no_evaluators():
    with record_converted() as converted:
        _compile(ReluTimesSize(), torch.randn(2, 3))
    assert converted == ["aten::relu", "aten::mul"]


def test_blocks_nest_and_dispatch_is_the_librarys_own_outside_them():
    with record_converted() as outer:
        _compile(torch.nn.ReLU(), torch.randn(2))
        with record_converted() as inner:
            _compile(torch.nn.Tanh(), torch.randn(2))
    _compile(torch.nn.Sigmoid(), torch.randn(2))
    assert (outer, inner) == (["aten::relu", "aten::tanh"], ["aten::tanh"])
    assert interpreter.find_converter is registry.find_converter
