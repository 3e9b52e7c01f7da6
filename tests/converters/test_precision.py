"""enabled_precisions: matmul runs in float16 or bfloat16, convolution in float16; the rest and the outputs stay
float32 (convolution kernels must match the input's dtype, and numpy has no bfloat16 for them)."""

import pytest
import torch
from torch import nn

import torch_trt
from harness import check_converter, dynamic_inputs


class ConvThenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.linear = nn.Conv2d(3, 8, 3), nn.Linear(8, 4)

    def forward(self, x):
        return torch.softmax(self.linear(self.conv(x).mean((2, 3))), -1)


@pytest.mark.parametrize("precision", [torch.float16, torch.bfloat16])
def test_reduced_precision_rounds_only_the_heavy_ops(precision, device):
    model, x = ConvThenLinear().eval(), torch.randn(2, 3, 8, 8)
    full = torch_trt.compile(model.to(device), inputs=[x.to(device)], target="reference", min_block_size=1)
    reduced = check_converter(model, [x], {"aten::_convolution", "aten::matmul"}, device, rtol=5e-2, atol=5e-3,
                              enabled_precisions={torch.float32, precision})
    with torch.no_grad():
        full_out, reduced_out = full(x.to(device)), reduced(x.to(device))
    assert reduced_out.dtype == torch.float32
    assert not torch.equal(full_out, reduced_out), "enabled_precisions changed nothing"


def test_reduced_precision_with_dynamic_batch(device):
    specs, inputs = dynamic_inputs([((1, 3, 8, 8), (2, 3, 8, 8), (6, 3, 8, 8), (5, 3, 8, 8))], torch.float32)
    reduced = check_converter(ConvThenLinear().eval(), inputs, {"aten::_convolution", "aten::matmul"}, device,
                              rtol=5e-2, atol=5e-3, specs=specs, enabled_precisions={torch.float32, torch.float16})
    assert reduced(inputs[0].to(device)).dtype == torch.float32
