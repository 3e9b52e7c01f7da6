import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness import check_converter, dynamic_inputs, make_input
from torch_trt.errors import ConversionError

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16

CASES = [  # id, module, input shape, dtype
    ("conv2d", nn.Conv2d(3, 8, 3), (2, 3, 10, 10), F32),
    ("conv2d_no_bias_stride_padding", nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False), (1, 3, 9, 9), F32),
    ("conv2d_asymmetric", nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 0)), (1, 2, 7, 6), F32),
    ("conv2d_groups", nn.Conv2d(4, 6, 3, groups=2), (1, 4, 8, 8), F32),
    ("conv2d_depthwise", nn.Conv2d(4, 4, 3, padding=1, groups=4), (2, 4, 6, 6), F32),
    ("conv2d_dilation", nn.Conv2d(2, 3, 3, dilation=2, padding=2), (1, 2, 9, 9), F32),
    ("conv2d_1x1", nn.Conv2d(5, 2, 1), (1, 5, 4, 4), F32),
    ("conv2d_unbatched", nn.Conv2d(3, 4, 3, padding=1), (3, 8, 8), F32),  # conv2d adds a unit batch, _convolution not
    ("conv1d_unbatched", nn.Conv1d(2, 3, 3), (2, 9), F32),
    ("conv_transpose2d_unbatched", nn.ConvTranspose2d(3, 2, 3, stride=2), (3, 4, 5), F32),
    ("conv2d_fp16", nn.Conv2d(3, 8, 3, padding=1).half(), (2, 3, 8, 8), F16),
    ("conv2d_bf16", nn.Conv2d(3, 8, 3, padding=1).bfloat16(), (2, 3, 8, 8), BF16),  # weights numpy cannot hold
    ("conv2d_groups_fp16", nn.Conv2d(4, 4, 3, groups=2, bias=False).half(), (1, 4, 6, 6), F16),
    ("conv1d", nn.Conv1d(3, 5, 3), (2, 3, 12), F32),
    ("conv1d_stride_padding_dilation", nn.Conv1d(2, 4, 3, stride=2, padding=2, dilation=2), (1, 2, 15), F32),
    ("conv1d_depthwise_no_bias", nn.Conv1d(4, 8, 5, groups=4, bias=False), (1, 4, 10), F32),
    ("conv1d_fp16", nn.Conv1d(3, 4, 3, padding=1).half(), (2, 3, 8), F16),
    ("conv3d", nn.Conv3d(2, 4, 3), (1, 2, 6, 6, 6), F32),
    ("conv3d_stride_padding_groups", nn.Conv3d(4, 4, (3, 2, 3), stride=(1, 2, 2), padding=1, groups=2),
     (1, 4, 5, 6, 7), F32),
    ("conv3d_fp16", nn.Conv3d(2, 2, 3, padding=1, bias=False).half(), (1, 2, 4, 4, 4), F16),
    ("conv_transpose2d", nn.ConvTranspose2d(3, 4, 3), (1, 3, 5, 5), F32),
    ("conv_transpose2d_stride_padding", nn.ConvTranspose2d(4, 2, 4, stride=2, padding=1), (2, 4, 5, 6), F32),
    ("conv_transpose2d_output_padding", nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
     (1, 2, 5, 5), F32),
    ("conv_transpose2d_output_padding_past_full", nn.ConvTranspose2d(2, 3, 3, stride=3, output_padding=(2, 1)),
     (1, 2, 4, 5), F32),
    ("conv_transpose2d_output_padding_dilated", nn.ConvTranspose2d(2, 2, 2, stride=3, dilation=2,
                                                                   output_padding=2), (1, 2, 4, 4), F32),
    ("conv_transpose2d_groups_no_bias", nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, bias=False), (1, 4, 4, 4),
     F32),
    ("conv_transpose2d_fp16", nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1).half(),
     (1, 3, 4, 4), F16),
    ("conv_transpose1d_output_padding", nn.ConvTranspose1d(3, 2, 3, stride=2, output_padding=1), (2, 3, 7), F32),
    ("conv_transpose3d_output_padding", nn.ConvTranspose3d(2, 2, 3, stride=2, padding=1, output_padding=(1, 0, 1)),
     (1, 2, 3, 4, 3), F32),
    ("conv_transpose1d", nn.ConvTranspose1d(3, 4, 3), (2, 3, 6), F32),
    ("conv_transpose1d_groups_dilation", nn.ConvTranspose1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
     (1, 4, 7), F32),
    ("conv_transpose1d_fp16", nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1).half(), (2, 3, 5),
     F16),
    ("conv_transpose3d_groups_fp16", nn.ConvTranspose3d(4, 2, (2, 3, 3), stride=(1, 2, 2), groups=2).half(),
     (1, 4, 3, 3, 4), F16),
    ("conv_transpose3d_dilation_no_bias", nn.ConvTranspose3d(2, 3, 2, dilation=2, padding=1, bias=False),
     (1, 2, 3, 4, 4), F32),
]


@pytest.mark.parametrize("name,module,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_conv(name, module, shape, dtype, device):
    check_converter(nn.Sequential(module), [torch.randn(shape, dtype=dtype)], {"aten::_convolution"}, device)


CONV, PADDED = {"aten::_convolution"}, {"aten::_convolution", "aten::constant_pad_nd"}

# Scripted, these call conv*d.padding; traced (the harness does both), _convolution_mode. An odd total of "same"
# padding (dilation * (kernel - 1)) puts its extra zero at the far end: a constant_pad_nd before the convolution.
STRING_PADDING = [  # id, module, input shape, dtype, converters that must run
    ("conv1d_same", nn.Conv1d(3, 4, 3, padding="same"), (2, 3, 10), F32, CONV),
    ("conv1d_same_even_kernel", nn.Conv1d(3, 4, 4, padding="same"), (2, 3, 9), F32, PADDED),
    ("conv1d_valid", nn.Conv1d(3, 4, 3, stride=2, padding="valid"), (1, 3, 11), F32, CONV),
    ("conv1d_same_even_kernel_unbatched", nn.Conv1d(2, 3, 4, padding="same"), (2, 8), F32, PADDED),
    ("conv2d_same", nn.Conv2d(3, 8, 3, padding="same"), (2, 3, 10, 10), F32, CONV),
    ("conv2d_same_even_kernel", nn.Conv2d(3, 4, (2, 3), padding="same"), (1, 3, 7, 8), F32, PADDED),
    ("conv2d_same_dilation", nn.Conv2d(2, 3, 3, padding="same", dilation=2), (1, 2, 9, 9), F32, CONV),
    ("conv2d_same_even_kernel_dilation", nn.Conv2d(2, 3, (4, 2), padding="same", dilation=(1, 3)), (1, 2, 8, 9),
     F32, PADDED),
    ("conv2d_same_depthwise", nn.Conv2d(4, 4, 5, padding="same", groups=4), (2, 4, 8, 8), F32, CONV),
    ("conv2d_same_groups_even_kernel", nn.Conv2d(4, 6, 2, padding="same", groups=2), (1, 4, 6, 7), F32, PADDED),
    ("conv2d_same_no_bias", nn.Conv2d(3, 4, 4, padding="same", bias=False), (1, 3, 6, 6), F32, PADDED),
    ("conv2d_same_fp16", nn.Conv2d(3, 8, 3, padding="same").half(), (2, 3, 8, 8), F16, CONV),
    ("conv2d_same_even_kernel_fp16", nn.Conv2d(3, 4, 2, padding="same").half(), (1, 3, 8, 8), F16, PADDED),
    ("conv2d_valid", nn.Conv2d(3, 4, 3, padding="valid", dilation=2), (1, 3, 9, 9), F32, CONV),
    ("conv3d_same", nn.Conv3d(2, 4, 3, padding="same"), (1, 2, 5, 6, 4), F32, CONV),
    ("conv3d_same_even_kernel", nn.Conv3d(2, 2, (2, 3, 4), padding="same", bias=False), (1, 2, 4, 5, 6), F32,
     PADDED),
    ("conv3d_valid", nn.Conv3d(2, 4, 2, padding="valid"), (1, 2, 4, 4, 4), F32, CONV),
]


@pytest.mark.parametrize("name,module,shape,dtype,converters", STRING_PADDING, ids=[c[0] for c in STRING_PADDING])
def test_conv_string_padding(name, module, shape, dtype, converters, device):
    check_converter(nn.Sequential(module), [torch.randn(shape, dtype=dtype)], converters, device)


def test_runtime_weight_is_refused(device):
    with pytest.raises(ConversionError, match="'weight' is a runtime tensor"):
        check_converter(lambda x, w: F.conv2d(x, w), [torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)],
                        {"aten::_convolution"}, device)


def _non_finite():
    """NaN and infinities beside finite values: each must reach only the blocks that read its position."""
    x = torch.linspace(-2, 2, 50).reshape(1, 2, 5, 5)
    x[0, 0, 1, 1], x[0, 1, 2, 3], x[0, 0, 4, 0] = float("nan"), float("inf"), float("-inf")
    return x


UNFOLD = [  # id, module, input shape (or the input itself), dtype
    ("unfold_2x2", nn.Unfold(2), (2, 3, 6, 6), F32),
    ("unfold_3x2_stride2", nn.Unfold((3, 2), stride=2), (1, 2, 7, 6), F32),
    ("unfold_padding", nn.Unfold(3, padding=1), (2, 2, 5, 4), F32),
    ("unfold_dilation", nn.Unfold(2, dilation=2), (1, 3, 7, 7), F32),
    ("unfold_mixed", nn.Unfold((3, 2), dilation=(2, 1), padding=(1, 2), stride=(2, 3)), (2, 3, 9, 10), F32),
    ("unfold_unbatched", nn.Unfold((2, 3), padding=1), (3, 5, 5), F32),
    ("unfold_fp16", nn.Unfold(2, padding=1, stride=2), (2, 3, 6, 6), F16),
    ("unfold_bf16", nn.Unfold((3, 2), dilation=2), (1, 2, 7, 6), BF16),
    ("unfold_1x1_stride2", nn.Unfold(1, stride=2), (2, 3, 5, 4), F32),
    ("unfold_bool", nn.Unfold(2, padding=1), (1, 2, 4, 5), torch.bool),  # eager's im2col takes no integer dtypes
    ("unfold_non_finite", nn.Unfold(3, padding=1), _non_finite(), F32),
]


@pytest.mark.parametrize("name,module,shape,dtype", UNFOLD, ids=[c[0] for c in UNFOLD])
def test_unfold(name, module, shape, dtype, device):
    check_converter(module, [make_input(shape, dtype)], {"aten::im2col"}, device)


DYNAMIC = [  # id, module, (min, opt, max, run) input shape, dtype
    ("conv2d_dynamic_batch", nn.Conv2d(3, 4, 3, padding=1), ((1, 3, 8, 8), (2, 3, 8, 8), (4, 3, 8, 8), (3, 3, 8, 8)),
     F32),
    ("conv2d_dynamic_spatial", nn.Conv2d(2, 3, 3, stride=2), ((1, 2, 5, 5), (1, 2, 8, 8), (1, 2, 12, 12), (1, 2, 11, 6)),
     F32),
    ("conv2d_same_dynamic_spatial", nn.Conv2d(2, 3, (2, 3), padding="same"),
     ((1, 2, 4, 4), (1, 2, 8, 8), (2, 2, 12, 12), (2, 2, 7, 10)), F32),
    ("conv_transpose1d_dynamic_length", nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1),
     ((1, 2, 3), (2, 2, 6), (4, 2, 9), (3, 2, 8)), F32),
    ("conv_transpose2d_dynamic_batch", nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
     ((1, 2, 4, 4), (2, 2, 4, 4), (5, 2, 4, 4), (4, 2, 4, 4)), F32),
]


@pytest.mark.parametrize("name,module,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_conv_dynamic(name, module, ranges, dtype, device):
    specs, inputs = dynamic_inputs([ranges], dtype)
    check_converter(nn.Sequential(module), inputs, {"aten::_convolution"}, device, specs=specs)


UNFOLD_DYNAMIC = [  # id, module, (min, opt, max, run) input shape, dtype
    ("unfold_dynamic_batch", nn.Unfold((3, 2), padding=1, stride=2),
     ((1, 2, 6, 6), (2, 2, 6, 6), (4, 2, 6, 6), (3, 2, 6, 6)), F32),
    ("unfold_dynamic_spatial", nn.Unfold((2, 3), dilation=2, padding=1),
     ((1, 2, 4, 5), (2, 2, 8, 8), (3, 2, 12, 12), (3, 2, 7, 10)), F32),
    ("unfold_dynamic_unbatched", nn.Unfold(2, stride=2), ((2, 2, 2), (2, 4, 6), (2, 9, 9), (2, 7, 5)), F16),
]


@pytest.mark.parametrize("name,module,ranges,dtype", UNFOLD_DYNAMIC, ids=[c[0] for c in UNFOLD_DYNAMIC])
def test_unfold_dynamic(name, module, ranges, dtype, device):
    specs, inputs = dynamic_inputs([ranges], dtype)
    check_converter(module, inputs, {"aten::im2col"}, device, specs=specs)
