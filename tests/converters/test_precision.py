"""enabled_precisions: matmul and convolution run in float16 or bfloat16; the rest and the outputs stay float32."""

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


@pytest.mark.parametrize("precision", [torch.float16, torch.bfloat16])
def test_reduced_precision_runs_convolutions_in_it(precision):
    """The convolution's kernel is handed to the network in the reduced precision (bfloat16 through the tensor's
    memory, which numpy cannot hold): every output value is one of that precision, cast to float32."""
    model, x = nn.Conv2d(3, 8, 3).eval(), torch.randn(2, 3, 8, 8)
    compiled = torch_trt.compile(model, inputs=[x], target="reference", min_block_size=1,
                                 enabled_precisions={torch.float32, precision}, require_full_compilation=True)
    with torch.no_grad():
        out = compiled(x)
        torch.testing.assert_close(out, model(x), rtol=2e-2, atol=2e-2)
    assert out.dtype == torch.float32 and torch.equal(out, out.to(precision).float())


def test_reduced_precision_with_dynamic_batch(device):
    specs, inputs = dynamic_inputs([((1, 3, 8, 8), (2, 3, 8, 8), (6, 3, 8, 8), (5, 3, 8, 8))], torch.float32)
    reduced = check_converter(ConvThenLinear().eval(), inputs, {"aten::_convolution", "aten::matmul"}, device,
                              rtol=5e-2, atol=5e-3, specs=specs, enabled_precisions={torch.float32, torch.float16})
    assert reduced(inputs[0].to(device)).dtype == torch.float32
