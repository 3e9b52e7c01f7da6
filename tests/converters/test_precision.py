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


class WideWeights(nn.Module):
    """A convolution and a linear layer, each with one weight past float16's range and one below its smallest
    subnormal."""

    def __init__(self):
        super().__init__()
        self.conv, self.linear = nn.Conv2d(2, 4, 1), nn.Linear(4, 3)
        with torch.no_grad():
            for weight in (self.conv.weight, self.linear.weight):
                weight.view(-1)[:2] = torch.tensor([1e5, -1e-9])

    def forward(self, x):
        return self.linear(self.conv(x).mean((2, 3)) * 1e-4)  # scaled so the clamped product fits float16


def test_float16_weights_beyond_its_range_clamp_with_a_warning(device, caplog):
    """As TensorRT converts weights to FP16: clamped to +-65504 (a plain cast gives inf), raised to the smallest
    subnormal (a cast gives 0), and a warning names each layer."""
    model, x = WideWeights().eval(), (torch.rand(2, 2, 3, 3) + 1) * 1e-3  # normal in float16: a GPU flushes less
    clamped = WideWeights().eval()
    with torch.no_grad():
        for weight in (clamped.conv.weight, clamped.linear.weight):
            weight.view(-1)[:2] = torch.tensor([65504.0, -2 ** -24])
    compiled = torch_trt.compile(model.to(device), inputs=[x.to(device)], target="reference", min_block_size=1,
                                 enabled_precisions={torch.float32, torch.float16})
    with torch.no_grad():
        out, expected = compiled(x.to(device)), clamped.to(device)(x.to(device))
    torch.testing.assert_close(out, expected, rtol=2e-2, atol=1e-2 * float(expected.abs().max()))  # float16's rounding
    warned = [r.getMessage() for r in caplog.records if "enabled_precisions runs it in float16" in r.getMessage()]
    assert [w.split(" ->")[0] for w in warned] == ["aten::_convolution", "aten::matmul"], warned
    assert all("1 exceed float16's range" in w and "1 nonzero ones lie below" in w for w in warned), warned


def test_float16_weights_within_its_range_convert_without_a_warning(caplog):
    compiled = torch_trt.compile(ConvThenLinear().eval(), inputs=[torch.randn(2, 3, 8, 8)], target="reference",
                                 min_block_size=1, enabled_precisions={torch.float32, torch.float16})
    assert compiled is not None and not any("enabled_precisions runs it" in r.getMessage() for r in caplog.records)
