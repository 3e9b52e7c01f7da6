"""A module that is one engine call runs that engine from Python, as TorchScript would, and nothing else does."""

import torch

import torch_trt
from torch_trt.runtime.direct_call import direct_engine_call

OPTIONS = {"target": "reference", "min_block_size": 1, "device": "cpu"}


class SwappedOutputs(torch.nn.Module):
    def forward(self, x, y):
        return y * 2, torch.relu(x + y), x


class HalfInPyTorch(torch.nn.Module):
    def forward(self, x, y):
        return torch.sigmoid(torch.relu(x) * y)


def test_the_direct_call_returns_what_the_module_returns():
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    compiled = torch_trt.compile(SwappedOutputs(), inputs=[x, y], **OPTIONS)
    direct = direct_engine_call(compiled)
    assert direct is not None, compiled.graph
    got, want = direct(x, y), compiled(x, y)
    assert isinstance(got, tuple) and len(got) == len(want) == 3
    for got_tensor, want_tensor in zip(got, want):
        torch.testing.assert_close(got_tensor, want_tensor)
    assert got[2] is want[2] is x  # an input the module returns as it came


def test_a_module_that_runs_an_op_in_pytorch_is_called_through_torchscript():
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    compiled = torch_trt.compile(HalfInPyTorch(), inputs=[x, y], torch_executed_ops={"aten::sigmoid"}, **OPTIONS)
    assert "aten::sigmoid" in str(compiled.graph)
    assert direct_engine_call(compiled) is None

