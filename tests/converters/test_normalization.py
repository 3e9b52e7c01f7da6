import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness import check_converter, dynamic_inputs


F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
BN, LN, GN, IN = "aten::batch_norm", "aten::layer_norm", "aten::group_norm", "aten::instance_norm"
# Tracing GroupNorm and training batch_norm warns about their batch-size checks, which freeze with the example shape.
pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")


def randomized(module, dtype=F32):
    """`module` in `dtype` with its float parameters and buffers (running stats too) drawn from [0.5, 1.5)."""
    with torch.no_grad():
        for tensor in list(module.parameters()) + list(module.buffers()):
            if tensor.is_floating_point():
                tensor.uniform_(0.5, 1.5)
    return module.to(dtype)


class InstanceNorm(nn.Module):
    """F.instance_norm with the parameters and buffers of `norm` (nn.InstanceNorm*d); its own forward branches on the
    input's rank (a prim::If that lowering keeps when scripted)."""

    def __init__(self, norm):
        super().__init__()
        self.norm = norm

    def forward(self, x):
        norm = self.norm
        return F.instance_norm(x, norm.running_mean, norm.running_var, norm.weight, norm.bias,
                               not norm.track_running_stats, 0.1, norm.eps)


CASES = [  # id, module, converter, input shape, dtype
    ("batch_norm_2d", randomized(nn.BatchNorm1d(4)), BN, (3, 4), F32),
    ("batch_norm_3d", randomized(nn.BatchNorm1d(4)), BN, (2, 4, 5), F32),
    ("batch_norm_4d", randomized(nn.BatchNorm2d(3)), BN, (2, 3, 4, 5), F32),
    ("batch_norm_4d_no_affine", randomized(nn.BatchNorm2d(3, affine=False)), BN, (2, 3, 4, 4), F32),
    ("batch_norm_4d_eps", randomized(nn.BatchNorm2d(3, eps=0.1)), BN, (1, 3, 2, 2), F32),
    ("batch_norm_5d", randomized(nn.BatchNorm3d(2)), BN, (2, 2, 3, 4, 3), F32),
    ("batch_norm_4d_fp16", randomized(nn.BatchNorm2d(3), F16), BN, (2, 3, 4, 5), F16),
    ("batch_norm_2d_fp16", randomized(nn.BatchNorm1d(6), F16), BN, (4, 6), F16),
    ("batch_norm_4d_bf16", randomized(nn.BatchNorm2d(3), BF16), BN, (2, 3, 4, 5), BF16),
    ("layer_norm_last_dim", randomized(nn.LayerNorm(8)), LN, (2, 5, 8), F32),
    ("layer_norm_last_2_dims", randomized(nn.LayerNorm((4, 6))), LN, (2, 3, 4, 6), F32),
    ("layer_norm_no_affine", nn.LayerNorm(8, elementwise_affine=False), LN, (3, 8), F32),
    ("layer_norm_no_bias", randomized(nn.LayerNorm(8, bias=False)), LN, (2, 2, 8), F32),
    ("layer_norm_eps", lambda x: F.layer_norm(x, (6,), eps=0.1), LN, (4, 6), F32),
    ("layer_norm_default_weights", nn.LayerNorm((3, 5)), LN, (2, 3, 5), F32),
    ("layer_norm_fp16", randomized(nn.LayerNorm(16), F16), LN, (2, 4, 16), F16),
    ("layer_norm_2_dims_fp16", randomized(nn.LayerNorm((4, 8)), F16), LN, (2, 4, 8), F16),
    ("group_norm", randomized(nn.GroupNorm(2, 4)), GN, (2, 4, 3, 3), F32),
    ("group_norm_per_channel_groups", randomized(nn.GroupNorm(4, 4)), GN, (1, 4, 5), F32),
    ("group_norm_one_group_no_affine", nn.GroupNorm(1, 6, affine=False), GN, (2, 6, 2, 2, 2), F32),
    ("group_norm_fp16", randomized(nn.GroupNorm(2, 8), F16), GN, (2, 8, 4, 4), F16),
    ("group_norm_bf16", randomized(nn.GroupNorm(4, 8), BF16), GN, (2, 8, 3, 5), BF16),
    ("instance_norm_2d", InstanceNorm(randomized(nn.InstanceNorm2d(3, affine=True))), IN, (2, 3, 4, 5), F32),
    ("instance_norm_2d_no_affine", InstanceNorm(nn.InstanceNorm2d(3)), IN, (2, 3, 4, 4), F32),
    ("instance_norm_1d", InstanceNorm(randomized(nn.InstanceNorm1d(4, affine=True))), IN, (3, 4, 7), F32),
    ("instance_norm_3d_eps", InstanceNorm(randomized(nn.InstanceNorm3d(2, eps=0.1, affine=True))), IN,
     (1, 2, 3, 4, 3), F32),
    ("instance_norm_running_stats",
     InstanceNorm(randomized(nn.InstanceNorm2d(3, affine=True, track_running_stats=True))),
     IN, (2, 3, 4, 4), F32),
    ("instance_norm_fp16", InstanceNorm(randomized(nn.InstanceNorm2d(4, affine=True), F16)), IN, (2, 4, 5, 5), F16),
    ("instance_norm_bf16", InstanceNorm(nn.InstanceNorm1d(3).to(BF16)), IN, (2, 3, 6), BF16),
]


@pytest.mark.parametrize("name,module,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_normalization(name, module, converter, shape, dtype, device):
    check_converter(module, [torch.randn(shape, dtype=dtype) * 2 + 1], {converter}, device)


HALF_TYPES = [  # id, module, converter, input shape, dtype
    ("group_norm_fp16", randomized(nn.GroupNorm(2, 8), F16), GN, (2, 8, 4, 4), F16),
    ("instance_norm_fp16", InstanceNorm(randomized(nn.InstanceNorm2d(3, affine=True), F16)), IN, (2, 3, 5, 5), F16),
    ("layer_norm_fp16", randomized(nn.LayerNorm(16), F16), LN, (2, 4, 16), F16),
]


@pytest.mark.parametrize("name,module,converter,shape,dtype", HALF_TYPES, ids=[c[0] for c in HALF_TYPES])
def test_normalization_of_half_types_computes_in_float32(name, module, converter, shape, dtype, device):
    # A variance of about 300 ** 2 overflows float16's range (65504): PyTorch computes the statistics in float32.
    check_converter(module, [(torch.randn(shape) * 300).to(dtype)], {converter}, device)


def _batch_norm_with_stats(mean, var, eps, dtype):
    norm = nn.BatchNorm2d(2, eps=eps)
    with torch.no_grad():
        norm.running_mean.fill_(mean)
        norm.running_var.fill_(var)
    return norm.to(dtype).eval()


FAR_FROM_ZERO = [  # id, mean, var, eps, dtype: half batch norms whose folded shift cancels x * scale
    ("fp16_shift_past_the_range", 100.0, 1e-6, 1e-7, F16),  # mean * scale is 3e5: the folded shift was inf, y NaN
    ("fp16_shift_cancelling", 300.0, 0.01, 1e-5, F16),  # x * 10 - 3000 rounds to steps of 2 in float16
    ("bf16_shift_cancelling", 30.0, 0.01, 1e-5, BF16),
]


@pytest.mark.parametrize("name,mean,var,eps,dtype", FAR_FROM_ZERO, ids=[c[0] for c in FAR_FROM_ZERO])
def test_half_batch_norm_far_from_zero_mean_scales_in_float32(name, mean, var, eps, dtype, device):
    x = (mean + torch.randn(2, 2, 3, 3) * var ** 0.5).to(dtype)
    check_converter(_batch_norm_with_stats(mean, var, eps, dtype), [x], {BN}, device)


class TrainingBatchNorm(nn.Module):
    """relu, then batch_norm in training mode on fixed running statistics."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("var", torch.ones(3))

    def forward(self, x):
        return F.batch_norm(torch.relu(x), self.mean, self.var, training=True)


def test_batch_norm_training_falls_back(device):
    compiled = check_converter(TrainingBatchNorm(), [torch.randn(2, 3, 4, 4)], {"aten::relu"}, device,
                               require_full_compilation=False)
    assert "aten::batch_norm" in str(compiled.graph)


DYNAMIC = [  # id, module, converter, (min, opt, max, run) input shape, dtype
    ("batch_norm_dynamic_batch", randomized(nn.BatchNorm2d(3)), BN, ((1, 3, 4, 4), (2, 3, 4, 4), (8, 3, 4, 4),
                                                                     (5, 3, 4, 4)), F32),
    ("layer_norm_dynamic_rows", randomized(nn.LayerNorm(8)), LN, ((1, 1, 8), (2, 4, 8), (4, 9, 8), (3, 7, 8)), F32),
    ("group_norm_dynamic_batch", randomized(nn.GroupNorm(2, 4)), GN, ((1, 4, 3, 3), (2, 4, 3, 3), (6, 4, 3, 3),
                                                                      (4, 4, 3, 3)), F32),
    ("instance_norm_dynamic_spatial", InstanceNorm(randomized(nn.InstanceNorm2d(2, affine=True))), IN,
     ((1, 2, 2, 2), (2, 2, 4, 4), (4, 2, 8, 8), (3, 2, 5, 7)), F32),
]


@pytest.mark.parametrize("name,module,converter,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_normalization_dynamic(name, module, converter, ranges, dtype, device):
    specs, inputs = dynamic_inputs([ranges], dtype)
    check_converter(module, inputs, {converter}, device, specs=specs)
