import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness import check_converter, dynamic_inputs
from torch_trt.errors import ConversionError

F32, F16 = torch.float32, torch.float16
MAX1, MAX2, MAX3 = "aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d"
AVG1, AVG2, AVG3 = "aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d"
ADAPT1, ADAPT2, ADAPT3 = "aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d"
AMAX1, AMAX2, AMAX3 = "aten::adaptive_max_pool1d", "aten::adaptive_max_pool2d", "aten::adaptive_max_pool3d"

CASES = [  # id, function or module, converter, input shape, dtype
    ("max2d", nn.MaxPool2d(2), MAX2, (2, 3, 8, 8), F32),
    ("max2d_stride_padding", nn.MaxPool2d(3, 2, 1), MAX2, (1, 2, 9, 9), F32),
    ("max2d_asymmetric", lambda x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0)), MAX2, (1, 2, 7, 6), F32),
    ("max2d_ceil", nn.MaxPool2d(3, 2, ceil_mode=True), MAX2, (1, 2, 8, 8), F32),
    ("max2d_ceil_drops_last_window", nn.MaxPool2d(2, 2, 1, ceil_mode=True), MAX2, (1, 2, 5, 5), F32),
    ("max2d_ceil_drops_one_dim", lambda x: F.max_pool2d(x, (2, 3), 2, 1, ceil_mode=True), MAX2, (1, 2, 5, 8), F32),
    ("max2d_ceil_only_drops", nn.MaxPool2d(1, 2, ceil_mode=True), MAX2, (1, 2, 6, 6), F32),
    ("max2d_unbatched", nn.MaxPool2d(2), MAX2, (3, 6, 6), F32),
    ("max2d_fp16", nn.MaxPool2d(3, 2, 1, ceil_mode=True), MAX2, (2, 3, 8, 8), F16),
    ("max1d", nn.MaxPool1d(2), MAX1, (2, 3, 9), F32),
    ("max1d_ceil_padding", nn.MaxPool1d(3, 2, 1, ceil_mode=True), MAX1, (1, 2, 10), F32),
    ("max1d_unbatched", nn.MaxPool1d(3), MAX1, (2, 9), F32),
    ("max3d", nn.MaxPool3d(2), MAX3, (1, 2, 4, 6, 6), F32),
    ("max3d_ceil_padding", nn.MaxPool3d(3, 2, 1, ceil_mode=True), MAX3, (1, 2, 6, 7, 8), F32),
    ("avg2d", nn.AvgPool2d(2), AVG2, (2, 3, 8, 8), F32),
    ("avg2d_include_pad", nn.AvgPool2d(3, 2, 1), AVG2, (1, 2, 9, 9), F32),
    ("avg2d_exclude_pad", nn.AvgPool2d(3, 2, 1, count_include_pad=False), AVG2, (1, 2, 9, 9), F32),
    ("avg2d_ceil_include_pad", nn.AvgPool2d(3, 2, 1, ceil_mode=True), AVG2, (1, 2, 8, 8), F32),
    ("avg2d_ceil_exclude_pad", nn.AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False), AVG2, (1, 2, 7, 7), F32),
    ("avg2d_ceil_drops_include_pad", nn.AvgPool2d(2, 2, 1, ceil_mode=True), AVG2, (1, 2, 5, 5), F32),
    ("avg2d_ceil_drops_exclude_pad", nn.AvgPool2d(2, 2, 1, ceil_mode=True, count_include_pad=False), AVG2,
     (1, 2, 5, 7), F32),
    ("avg2d_fp16", nn.AvgPool2d(3, 2, 1, count_include_pad=False), AVG2, (2, 3, 8, 8), F16),
    ("avg1d", nn.AvgPool1d(3), AVG1, (2, 3, 9), F32),
    ("avg1d_ceil_padding", nn.AvgPool1d(3, 2, 1, ceil_mode=True), AVG1, (1, 2, 10), F32),
    ("avg1d_exclude_pad", nn.AvgPool1d(4, 3, 2, count_include_pad=False), AVG1, (1, 2, 11), F32),
    ("avg3d", nn.AvgPool3d(2), AVG3, (1, 2, 4, 6, 6), F32),
    ("avg3d_ceil_exclude_pad", nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False), AVG3, (1, 2, 6, 7, 8),
     F32),
    ("adaptive2d_1x1", lambda x: F.adaptive_avg_pool2d(x, 1), ADAPT2, (2, 3, 7, 5), F32),
    ("adaptive2d_2x2", lambda x: F.adaptive_avg_pool2d(x, (2, 2)), ADAPT2, (2, 3, 8, 6), F32),
    ("adaptive2d_2x4", lambda x: F.adaptive_avg_pool2d(x, (2, 4)), ADAPT2, (1, 3, 6, 8), F32),
    ("adaptive2d_same_size", lambda x: F.adaptive_avg_pool2d(x, (3, 3)), ADAPT2, (1, 2, 3, 3), F32),
    ("adaptive2d_unbatched", lambda x: F.adaptive_avg_pool2d(x, 2), ADAPT2, (3, 4, 4), F32),
    ("adaptive2d_1x1_fp16", lambda x: F.adaptive_avg_pool2d(x, 1), ADAPT2, (2, 8, 7, 7), F16),
    ("adaptive2d_2x2_fp16", lambda x: F.adaptive_avg_pool2d(x, 2), ADAPT2, (2, 8, 6, 6), F16),
    ("adaptive1d_1", lambda x: F.adaptive_avg_pool1d(x, 1), ADAPT1, (2, 3, 7), F32),
    ("adaptive1d_3", lambda x: F.adaptive_avg_pool1d(x, 3), ADAPT1, (2, 3, 9), F32),
    ("adaptive3d_1", lambda x: F.adaptive_avg_pool3d(x, 1), ADAPT3, (1, 2, 3, 4, 5), F32),
    ("adaptive3d_1x2x2", lambda x: F.adaptive_avg_pool3d(x, (1, 2, 2)), ADAPT3, (1, 2, 3, 4, 6), F32),
    ("adaptive2d_uneven_7_to_3", lambda x: F.adaptive_avg_pool2d(x, 3), ADAPT2, (1, 2, 7, 7), F32),
    ("adaptive2d_uneven_one_dim", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), ADAPT2, (2, 3, 6, 7), F32),
    ("adaptive2d_upsampling", lambda x: F.adaptive_avg_pool2d(x, (5, 2)), ADAPT2, (1, 2, 3, 4), F32),
    ("adaptive2d_uneven_unbatched", lambda x: F.adaptive_avg_pool2d(x, (4, 1)), ADAPT2, (3, 7, 5), F32),
    ("adaptive2d_uneven_fp16", lambda x: F.adaptive_avg_pool2d(x, 3), ADAPT2, (2, 4, 8, 5), F16),
    ("adaptive1d_uneven", lambda x: F.adaptive_avg_pool1d(x, 4), ADAPT1, (2, 3, 10), F32),
    ("adaptive3d_uneven", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 1)), ADAPT3, (1, 2, 5, 4, 3), F32),
    ("adaptive_max2d_1x1", lambda x: F.adaptive_max_pool2d(x, 1), AMAX2, (2, 3, 5, 4), F32),
    ("adaptive_max2d_even", lambda x: F.adaptive_max_pool2d(x, (2, 3)), AMAX2, (2, 3, 4, 6), F32),
    ("adaptive_max2d_uneven", lambda x: F.adaptive_max_pool2d(x, 3), AMAX2, (1, 2, 7, 7), F32),
    ("adaptive_max2d_uneven_fp16", lambda x: F.adaptive_max_pool2d(x, (3, 2)), AMAX2, (2, 3, 5, 5), F16),
    ("adaptive_max1d", lambda x: F.adaptive_max_pool1d(x, 3), AMAX1, (2, 3, 8), F32),
    ("adaptive_max1d_unbatched", lambda x: F.adaptive_max_pool1d(x, 2), AMAX1, (3, 8), F32),
    ("adaptive_max3d", lambda x: F.adaptive_max_pool3d(x, (1, 2, 3)), AMAX3, (1, 2, 3, 4, 5), F32),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_pooling(name, function, converter, shape, dtype, device):
    check_converter(function, [torch.randn(shape, dtype=dtype)], {converter}, device)


FALLBACK = [  # id, function whose pooling runs in PyTorch (the converter's `supports` says no), input shape
    ("max_dilation", lambda x: F.max_pool2d(torch.relu(x), 2, dilation=2), (1, 2, 8, 8)),
    ("avg_divisor_override", lambda x: F.avg_pool2d(torch.relu(x), 2, divisor_override=3), (1, 2, 8, 8)),
    ("adaptive_max_indices", lambda x: F.adaptive_max_pool2d(torch.relu(x), 2, return_indices=True), (1, 2, 8, 8)),
]


@pytest.mark.parametrize("name,function,shape", FALLBACK, ids=[c[0] for c in FALLBACK])
def test_pooling_falls_back(name, function, shape, device):
    compiled = check_converter(function, [torch.randn(shape)], {"aten::relu"}, device, require_full_compilation=False)
    assert "_pool2d" in str(compiled.graph)


REFUSED = [  # id, function, input shape, message
    ("ceil_drops_and_adds", lambda x: F.max_pool2d(x, (1, 3), 2, ceil_mode=True), (1, 2, 6, 6),
     "both drops and adds windows"),
]


@pytest.mark.parametrize("name,function,shape,message", REFUSED, ids=[c[0] for c in REFUSED])
def test_pooling_refused(name, function, shape, message, device):
    with pytest.raises(ConversionError, match=message):
        check_converter(function, [torch.randn(shape)], set(), device)


DYNAMIC = [  # id, function or module, converter, (min, opt, max, run) input shape, dtype
    ("max2d_dynamic_batch", nn.MaxPool2d(3, 2, 1), MAX2, ((1, 2, 8, 8), (2, 2, 8, 8), (6, 2, 8, 8), (5, 2, 8, 8)), F32),
    ("avg2d_dynamic_spatial", nn.AvgPool2d(2), AVG2, ((1, 2, 4, 4), (1, 2, 8, 8), (1, 2, 12, 12), (1, 2, 10, 6)),
     F32),
    ("adaptive2d_1x1_dynamic_batch", lambda x: F.adaptive_avg_pool2d(x, 1), ADAPT2,
     ((1, 3, 5, 5), (2, 3, 5, 5), (8, 3, 5, 5), (7, 3, 5, 5)), F32),
    ("adaptive2d_uneven_dynamic_batch", lambda x: F.adaptive_avg_pool2d(x, 3), ADAPT2,
     ((1, 2, 7, 7), (2, 2, 7, 7), (4, 2, 7, 7), (3, 2, 7, 7)), F32),
    ("adaptive_max2d_1x1_dynamic_spatial", lambda x: F.adaptive_max_pool2d(x, 1), AMAX2,
     ((1, 2, 2, 2), (1, 2, 5, 5), (2, 2, 9, 9), (2, 2, 3, 8)), F32),
    # Windows of a dynamic dim: slices of runtime start and length, one reduction each (they ran in PyTorch).
    ("adaptive2d_dynamic_spatial", lambda x: F.adaptive_avg_pool2d(x, 3), ADAPT2,
     ((1, 2, 4, 4), (1, 2, 6, 6), (1, 2, 8, 8), (1, 2, 7, 5)), F32),
    ("adaptive_max2d_dynamic_spatial_larger_output", lambda x: F.adaptive_max_pool2d(x, (7, 2)), AMAX2,
     ((1, 2, 2, 2), (1, 2, 6, 6), (2, 2, 9, 9), (2, 2, 4, 9)), F32),
    ("adaptive1d_dynamic_length", lambda x: F.adaptive_avg_pool1d(x, 4), ADAPT1,
     ((1, 3, 2), (2, 3, 8), (2, 3, 16), (1, 3, 11)), F32),
]


@pytest.mark.parametrize("name,function,converter,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_pooling_dynamic(name, function, converter, ranges, dtype, device):
    specs, inputs = dynamic_inputs([ranges], dtype)
    check_converter(function, inputs, {converter}, device, specs=specs)
