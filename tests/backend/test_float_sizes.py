"""Float arithmetic on dynamic sizes (dynamo's SymFloats) through torch.compile: Python computes it in float64, and
the trace, which records sizes as int64 tensors, computed it in float32."""

import torch
from dynamo_harness import check_compiled, engine_calls, pytorch_ops


class RangeToAFloatOfTheSize(torch.nn.Module):
    def forward(self, x):
        return torch.arange(1.0, x.size(0) * 0.7 + 1.0, 0.7) + x.sum()


def test_a_range_whose_end_is_float_arithmetic_on_a_size_has_eagers_length(builds):
    """In float32, 2 * 0.7 + 1.0 lands past 2.4 and arange(1.0, end, 0.7) takes a third step; eager takes two."""
    check_compiled(RangeToAFloatOfTheSize(), [[torch.zeros(n)] for n in (4, 2, 7)], dynamic=True)


class ScalesByFloatsOfTheSize(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x * (x.size(1) / 3)) / (x.size(1) * 0.5 + 1)


def test_a_float_of_a_size_scaling_a_tensor_keeps_that_op_in_the_engine(builds):
    """The float64 scalar arithmetic runs in PyTorch (one mul of it); the tensor ops it scales stay in one engine,
    taking each scalar in float32 as PyTorch's float32 kernels do."""
    check_compiled(ScalesByFloatsOfTheSize(), [[torch.randn(2, n)] for n in (4, 2, 7)], dynamic=True)
    in_pytorch = pytorch_ops(builds)
    assert len(builds) == engine_calls(builds) == 1 and in_pytorch.count("aten::mul") == 1
    assert set(in_pytorch) == {"aten::size", "prim::NumToTensor", "aten::to", "aten::div", "aten::mul", "aten::add"}
