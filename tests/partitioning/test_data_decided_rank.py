"""A node whose output rank depends on a dynamic size runs in PyTorch: no engine profile can describe it."""

import torch

import torch_trt


class _SqueezeAll(torch.nn.Module):
    def forward(self, x):
        return (x * 2).squeeze()


def test_squeeze_of_a_dim_that_may_be_one_follows_eager():
    spec = torch_trt.Input(min_shape=(1, 3), opt_shape=(2, 3), max_shape=(3, 3))
    module = _SqueezeAll().eval()
    compiled = torch_trt.compile(torch.jit.script(module), inputs=[spec], target="reference", min_block_size=1,
                                 device="cpu")
    for rows in (1, 3):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(compiled(x), module(x))
