"""Freezing folds batch norms into the convolutions before them, through both front doors, and never into a linear
layer: PyTorch's linear fold takes the linear's last dim for the batch norm's channels, right for 2-D inputs only."""

import pytest
import torch
from torch import nn
from dynamo_harness import REFERENCE, check_compiled

import torch_trt


def _with_statistics(batch_norm):
    with torch.no_grad():
        batch_norm.running_mean.uniform_(-1, 1)
        batch_norm.running_var.uniform_(0.3, 3)
        batch_norm.weight.uniform_(0.5, 1.5)
        batch_norm.bias.uniform_(-1, 1)
    return batch_norm


LINEAR_THEN_BATCH_NORM = {  # (model, input): the linear's out_features equal the batch norm's channels
    "2d": (lambda: nn.Sequential(nn.Linear(3, 4), _with_statistics(nn.BatchNorm1d(4))), (5, 3)),
    "3d": (lambda: nn.Sequential(nn.Linear(3, 4), _with_statistics(nn.BatchNorm1d(4))), (2, 4, 3)),
    "4d": (lambda: nn.Sequential(nn.Linear(3, 4), _with_statistics(nn.BatchNorm2d(4))), (2, 4, 3, 3)),
}


@pytest.mark.parametrize("case", list(LINEAR_THEN_BATCH_NORM))
def test_a_batch_norm_after_a_linear_layer_matches_eager(case):
    """On [N, C, L], the fold scaled the linear's outputs (the last dim) by channel: off by up to 2.2."""
    make, shape = LINEAR_THEN_BATCH_NORM[case]
    model, x = make().eval(), torch.randn(shape)
    compiled = torch_trt.compile(model, inputs=[x], device="cpu", **REFERENCE)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    check_compiled(model, [[x]])


def test_a_batch_norm_after_a_convolution_is_still_folded_into_it():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), _with_statistics(nn.BatchNorm2d(4))).eval()
    compiled = torch_trt.compile(model, inputs=[torch.randn(2, 3, 8, 8)], device="cpu", **REFERENCE)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    frozen, *_ = torch_trt.backend.torchscript.prepare(model, [x], {"device": "cpu", **REFERENCE})
    kinds = {node.kind() for node in frozen.graph.nodes()}
    assert "aten::batch_norm" not in kinds and "aten::conv2d" in kinds
