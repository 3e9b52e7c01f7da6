import pytest
import torch
import torch.nn.functional as F

import torch_trt

from harness import check_converter, dynamic_inputs

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


def _to_a_multiple_of_4(x):
    """Pads the last two dims up to multiples of 4, as windowed attention does (swin): amounts read from sizes."""
    return F.pad(x, (0, -x.size(-1) % 4, 0, -x.size(-2) % 4)) + 1


# Dynamic dims in other modes, or padded by amounts read from sizes: a slice of runtime start and size.
RUNTIME = [  # id, function, (min, opt, max, run) input shape, dtype
    ("reflect_dynamic_dim", lambda x: F.pad(x, (1, 1), mode="reflect"), ((1, 2, 4), (1, 2, 6), (1, 2, 8), (1, 2, 5)),
     F32),
    ("fill_dynamic_dim", lambda x: F.pad(x, (1, 1), value=1.0), ((1, 2, 4), (1, 2, 6), (1, 2, 8), (1, 2, 5)), F32),
    ("zero_pad_int64_dynamic_dim", lambda x: F.pad(x, (1, 1)), ((1, 2, 4), (1, 2, 6), (1, 2, 8), (1, 2, 5)),
     torch.int64),
    ("replicate_dynamic_dims", lambda x: F.pad(x, (2, 0, 1, 3), mode="replicate"),
     ((1, 1, 1, 1), (1, 2, 4, 6), (2, 2, 8, 8), (2, 2, 3, 7)), F32),
    ("circular_crop_dynamic_dim", lambda x: F.pad(x, (2, -1), mode="circular"),
     ((1, 2, 3), (1, 2, 6), (1, 2, 8), (1, 2, 5)), F32),
    ("zero_pad_to_a_multiple_of_sizes", _to_a_multiple_of_4, ((1, 2, 1, 1), (1, 2, 4, 6), (2, 2, 9, 9), (2, 2, 5, 7)),
     F32),
    ("reflect_pad_of_a_size", lambda x: F.pad(x, (x.size(1), 0), mode="reflect"),
     ((1, 1, 4), (1, 2, 6), (1, 3, 8), (1, 3, 5)), F32),
]


@pytest.mark.parametrize("name,function,ranges,dtype", RUNTIME, ids=[c[0] for c in RUNTIME])
def test_padding_at_run_time(name, function, ranges, dtype, device):
    specs, inputs = dynamic_inputs([ranges], dtype)
    check_converter(function, inputs, {"aten::pad"}, device, specs=specs)


class ReflectsBySize(torch.nn.Module):
    def forward(self, x, y):
        return F.pad(x, (y.size(0), 0), mode="reflect") * 2


def test_reflect_padding_as_wide_as_the_dim_fails_as_eager_does(device):
    """Eager raises unless the amount is below the dim's size; the slice reflected again past the edge."""
    spec = torch_trt.Input(min_shape=(1, 2, 2), opt_shape=(1, 2, 6), max_shape=(1, 2, 8))
    y = torch_trt.Input(min_shape=(1,), opt_shape=(2,), max_shape=(3,))
    compiled = torch_trt.compile(ReflectsBySize().eval(), inputs=[spec, y], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    x = torch.randn(1, 2, 5, device=device)
    torch.testing.assert_close(compiled(x, torch.randn(3, device=device)), F.pad(x, (3, 0), mode="reflect") * 2)
    with pytest.raises(RuntimeError, match="assertion failed: reflect padding of dim 2 must be smaller than its size"):
        compiled(x[..., :3], torch.randn(3, device=device))
