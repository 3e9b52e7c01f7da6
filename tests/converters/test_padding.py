import pytest
import torch
import torch.nn.functional as F

from harness import check_converter, dynamic_inputs
from torch_trt.errors import ConversionError

F32, F16, I32 = torch.float32, torch.float16, torch.int32
aten = torch.ops.aten
PAD, CONSTANT = "aten::pad", "aten::constant_pad_nd"
REFLECT1, REFLECT2, REFLECT3 = "aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d"
REPLICATE1, REPLICATE2, REPLICATE3 = "aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d"

CASES = [  # id, function, converter, input shape, dtype
    ("pad_constant_last_dim", lambda x: F.pad(x, (1, 2)), PAD, (2, 3, 4), F32),
    ("pad_constant_value_2d", lambda x: F.pad(x, (1, 2, 3, 0), value=2.5), PAD, (2, 3, 4, 5), F32),
    ("pad_constant_3_dims", lambda x: F.pad(x, (0, 1, 2, 0, 1, 1)), PAD, (2, 3, 4, 5), F32),
    ("pad_constant_batch_dim", lambda x: F.pad(x, (0, 0, 0, 0, 0, 0, 1, 1), value=-1.0), PAD, (2, 3, 4, 5), F32),
    ("pad_constant_crop", lambda x: F.pad(x, (-1, 2, 1, -2)), PAD, (2, 3, 4, 5), F32),
    ("pad_constant_nothing", lambda x: F.pad(x, (0, 0)), PAD, (2, 3), F32),
    ("pad_constant_fp16", lambda x: F.pad(x, (2, 1, 1, 2), value=1.5), PAD, (1, 3, 4, 4), F16),
    ("pad_constant_int32", lambda x: F.pad(x, (1, 1), value=7.0), PAD, (3, 4), I32),
    ("pad_reflect_1d", lambda x: F.pad(x, (2, 3), mode="reflect"), PAD, (2, 3, 5), F32),
    ("pad_reflect_2d", lambda x: F.pad(x, (1, 2, 3, 1), mode="reflect"), PAD, (1, 2, 5, 6), F32),
    ("pad_reflect_3d_fp16", lambda x: F.pad(x, (1, 1, 2, 0, 0, 1), mode="reflect"), PAD, (1, 2, 3, 4, 5), F16),
    ("pad_replicate_2d", lambda x: F.pad(x, (3, 0, 1, 4), mode="replicate"), PAD, (1, 2, 3, 4), F32),
    ("pad_replicate_unbatched", lambda x: F.pad(x, (2, 2), mode="replicate"), PAD, (3, 4), F32),
    ("pad_circular_2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"), PAD, (1, 2, 4, 5), F32),
    # PyTorch crops first and wraps the cropped tensor
    ("pad_circular_crop_and_wrap", lambda x: F.pad(x, (-1, 1), mode="circular"), PAD, (1, 2, 4), F32),
    ("pad_circular_crop_and_wrap_2d", lambda x: F.pad(x, (1, -2, 0, 1), mode="circular"), PAD, (1, 2, 4, 5), F32),
    ("constant_pad_nd", lambda x: torch.constant_pad_nd(x, [1, 2, 0, 1], 3.0), CONSTANT, (2, 3, 4), F32),
    ("constant_pad_nd_int32", lambda x: torch.constant_pad_nd(x, [1, 1], -2), CONSTANT, (2, 3), I32),
    ("constant_pad_nd_default", lambda x: torch.constant_pad_nd(x, [2, 0, 0, 0, 1, 0]), CONSTANT, (2, 3, 4), F16),
    ("reflection_pad1d", lambda x: aten.reflection_pad1d(x, [2, 1]), REFLECT1, (2, 3, 4), F32),
    ("reflection_pad2d", lambda x: aten.reflection_pad2d(x, [1, 1, 2, 0]), REFLECT2, (2, 3, 4, 5), F32),
    ("reflection_pad2d_unbatched", lambda x: aten.reflection_pad2d(x, [0, 3, 1, 1]), REFLECT2, (3, 4, 5), F32),
    ("reflection_pad3d", lambda x: aten.reflection_pad3d(x, [1, 0, 0, 1, 1, 1]), REFLECT3, (1, 2, 3, 4, 5), F32),
    ("replication_pad1d", lambda x: aten.replication_pad1d(x, [0, 4]), REPLICATE1, (2, 3, 4), F32),
    ("replication_pad2d", lambda x: aten.replication_pad2d(x, [2, 1, 0, 3]), REPLICATE2, (2, 3, 4, 5), F16),
    ("replication_pad3d", lambda x: aten.replication_pad3d(x, [1, 2, 1, 0, 2, 1]), REPLICATE3, (1, 2, 3, 4, 5), F32),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_padding(name, function, converter, shape, dtype, device):
    check_converter(function, [torch.randn(shape).mul(5).to(dtype)], {converter}, device)


DYNAMIC = [  # id, function, converter, (min, opt, max, run) input shape
    ("zero_pad_dynamic_spatial", lambda x: F.pad(x, (1, 2, 0, 3)), PAD,
     ((1, 2, 2, 2), (1, 2, 4, 4), (2, 2, 8, 8), (2, 2, 3, 7))),
    ("zero_crop_dynamic_last_dim", lambda x: torch.constant_pad_nd(x, [-1, 2]), CONSTANT,
     ((1, 3, 2), (2, 3, 4), (4, 3, 8), (3, 3, 6))),
    ("zero_pad_dynamic_rank_2", lambda x: F.pad(x, (1, 0, 2, 1)), PAD,  # the padding layer takes rank >= 4
     ((1, 2), (2, 4), (4, 8), (3, 5))),
    ("reflect_dynamic_batch", lambda x: F.pad(x, (2, 1, 1, 1), mode="reflect"), PAD,
     ((1, 2, 4, 4), (2, 2, 4, 4), (4, 2, 4, 4), (3, 2, 4, 4))),
]


@pytest.mark.parametrize("name,function,converter,ranges", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_padding_dynamic(name, function, converter, ranges, device):
    specs, inputs = dynamic_inputs([ranges], F32)
    check_converter(function, inputs, {converter}, device, specs=specs)


REFUSED = [  # id, function, (min, opt, max, run) input shape, message
    ("reflect_dynamic_dim", lambda x: F.pad(x, (1, 1), mode="reflect"),
     ((1, 2, 4), (1, 2, 6), (1, 2, 8), (1, 2, 5)), "reflect padding of dynamic dims"),
    ("fill_dynamic_dim", lambda x: F.pad(x, (1, 1), value=1.0),
     ((1, 2, 4), (1, 2, 6), (1, 2, 8), (1, 2, 5)), "constant padding of dynamic dims"),
]


@pytest.mark.parametrize("name,function,ranges,message", REFUSED, ids=[c[0] for c in REFUSED])
def test_padding_refused(name, function, ranges, message, device):
    specs, inputs = dynamic_inputs([ranges], F32)
    with pytest.raises(ConversionError, match=message):
        check_converter(function, inputs, set(), device, specs=specs)


def test_zero_padding_of_dynamic_dims_of_a_type_the_padding_layer_lacks_is_refused(device):
    specs, inputs = dynamic_inputs([((1, 2, 4), (1, 2, 6), (1, 2, 8), (1, 2, 5))], torch.int64)
    with pytest.raises(ConversionError, match="zero padding of the last 2 dims of float32, float16, int32 or int8"):
        check_converter(lambda x: F.pad(x, (1, 1)), inputs, set(), device, specs=specs)
