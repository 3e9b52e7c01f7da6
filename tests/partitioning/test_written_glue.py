"""Glue a later node writes in place (a list a loop appends to) runs in PyTorch only: an engine rebuilding it would
read it before the writes."""

import torch
import torch.nn.functional as F

import torch_trt


class _Upsample(torch.nn.Module):
    """Scripted F.interpolate builds its scale factors by appending to an empty list in a loop."""

    def forward(self, x):
        return F.interpolate(x * 2, scale_factor=2.0) + 1


def test_a_list_appended_to_in_a_loop_is_not_rebuilt_in_an_engine():
    module, x = _Upsample().eval(), torch.randn(1, 2, 4, 4)
    compiled = torch_trt.compile(torch.jit.script(module), inputs=[x], target="reference", min_block_size=1)
    assert "torch_trt::execute_engine" in str(compiled.graph)
    torch.testing.assert_close(compiled(x), module(x))
