"""Not collected by default: a converter misusing the API while its test passes; test_conformance.py runs this
file alone to show that the session fails anyway (the check at session end, when the final test is not run)."""

import torch

import torch_trt
from torch_trt.conversion import registry


def test_converter_reading_a_reference_internal(monkeypatch):
    def relu(ctx, node, args):
        layer = ctx.net.add_activation(args[0].itensor(), ctx.trt.ActivationType.RELU)
        assert layer._network is not None  # a reference internal: no such attribute on TensorRT's layers
        return ctx.set_output(node, layer)

    key = ("aten::relu", "")
    monkeypatch.setitem(registry.CONVERTERS, key, registry.Registration(relu, registry.CONVERTERS[key].schema))
    x = torch.randn(2, 3)
    compiled = torch_trt.compile(torch.nn.ReLU().eval(), inputs=[x], target="reference", min_block_size=1)
    torch.testing.assert_close(compiled(x), torch.relu(x))
