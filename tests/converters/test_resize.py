import pytest
import torch
import torch.nn.functional as F

import torch_trt

from harness import check_converter, dynamic_inputs
from torch_trt.errors import ConversionError

F32, F16 = torch.float32, torch.float16
aten = torch.ops.aten
NEAREST1, NEAREST2, NEAREST3 = "aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::upsample_nearest3d"
EXACT2, LINEAR1, BILINEAR2 = "aten::_upsample_nearest_exact2d", "aten::upsample_linear1d", "aten::upsample_bilinear2d"
BICUBIC2, TRILINEAR3 = "aten::upsample_bicubic2d", "aten::upsample_trilinear3d"


CASES = [  # id, function, converter, input shape, dtype
    ("nearest2d_scale", lambda x: F.interpolate(x, scale_factor=2.0), NEAREST2, (2, 3, 5, 6), F32),
    ("nearest2d_size_uneven", lambda x: F.interpolate(x, size=(7, 4)), NEAREST2, (1, 2, 5, 6), F32),
    ("nearest2d_scale_per_dim", lambda x: F.interpolate(x, scale_factor=(3.0, 0.5)), NEAREST2,
     (1, 2, 4, 6), F32),
    ("nearest2d_scale_fraction", lambda x: F.interpolate(x, scale_factor=1.5), NEAREST2,
     (1, 2, 4, 6), F32),
    ("nearest2d_fp16", lambda x: F.interpolate(x, scale_factor=2.0), NEAREST2, (2, 3, 4, 4), F16),
    ("nearest2d_size_arg", lambda x: aten.upsample_nearest2d(x, [9, 4]), NEAREST2, (1, 2, 5, 6), F32),
    ("nearest2d_size_and_scales", lambda x: aten.upsample_nearest2d(x, [10, 3], 2.0, 0.5), NEAREST2, (1, 2, 5, 6),
     F32),
    ("nearest1d_scale", lambda x: F.interpolate(x, scale_factor=3.0), NEAREST1, (2, 3, 5), F32),
    ("nearest1d_size_arg", lambda x: aten.upsample_nearest1d(x, [8]), NEAREST1, (2, 3, 5), F32),
    ("nearest3d_size", lambda x: F.interpolate(x, size=(2, 5, 7)), NEAREST3, (1, 2, 3, 4, 5), F32),
    ("nearest3d_size_arg", lambda x: aten.upsample_nearest3d(x, [6, 8, 2]), NEAREST3, (1, 2, 3, 4, 5), F32),
    ("nearest_exact2d", lambda x: F.interpolate(x, size=(7, 4), mode="nearest-exact"), EXACT2,
     (1, 2, 5, 6), F32),
    ("nearest_exact2d_size_arg", lambda x: aten._upsample_nearest_exact2d(x, [3, 11]), EXACT2, (1, 2, 5, 6), F32),
    ("linear1d", lambda x: F.interpolate(x, scale_factor=2.0, mode="linear"), LINEAR1, (2, 3, 5),
     F32),
    ("linear1d_align_corners_arg", lambda x: aten.upsample_linear1d(x, [9], True), LINEAR1, (2, 3, 5), F32),
    ("bilinear_size", lambda x: F.interpolate(x, size=(9, 4), mode="bilinear"), BILINEAR2,
     (2, 3, 5, 6), F32),
    ("bilinear_align_corners",
     lambda x: F.interpolate(x, size=(9, 13), mode="bilinear", align_corners=True), BILINEAR2,
     (1, 3, 5, 6), F32),
    ("bilinear_align_corners_one_row",
     lambda x: F.interpolate(x, size=(1, 4), mode="bilinear", align_corners=True), BILINEAR2,
     (1, 3, 5, 6), F32),
    ("bilinear_align_corners_odd_scale",
     lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True), BILINEAR2,
     (1, 3, 5, 6), F32),
    ("bilinear_fp16", lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear"), BILINEAR2,
     (1, 3, 4, 4), F16),
    ("bilinear_size_arg", lambda x: aten.upsample_bilinear2d(x, [3, 12], False, None, 2.0), BILINEAR2,
     (1, 2, 5, 6), F32),
    ("bicubic_scale", lambda x: F.interpolate(x, scale_factor=2.0, mode="bicubic"), BICUBIC2,
     (1, 3, 5, 6), F32),
    ("bicubic_align_corners_down",
     lambda x: F.interpolate(x, size=(3, 4), mode="bicubic", align_corners=True), BICUBIC2,
     (1, 3, 7, 7), F32),
    ("bicubic_size_arg", lambda x: aten.upsample_bicubic2d(x, [11, 5], False), BICUBIC2, (2, 2, 5, 6), F32),
    ("trilinear", lambda x: F.interpolate(x, size=(5, 3, 8), mode="trilinear"), TRILINEAR3,
     (1, 2, 3, 4, 5), F32),
    ("trilinear_align_corners_arg", lambda x: aten.upsample_trilinear3d(x, [6, 8, 2], True), TRILINEAR3,
     (1, 2, 3, 4, 5), F32),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_resize(name, function, converter, shape, dtype, device):
    check_converter(function, [torch.randn(shape, dtype=dtype)], {converter}, device)


DYNAMIC = [  # id, function, converter, (min, opt, max, run) input shape
    ("nearest2d_dynamic_spatial", lambda x: F.interpolate(x, scale_factor=2.0), NEAREST2,
     ((1, 2, 2, 2), (1, 2, 4, 4), (2, 2, 8, 8), (2, 2, 3, 7))),
    ("bilinear_dynamic_batch_fixed_size", lambda x: F.interpolate(x, size=(10, 3), mode="bilinear"),
     BILINEAR2, ((1, 2, 5, 6), (2, 2, 5, 6), (4, 2, 5, 6), (3, 2, 5, 6))),
    ("bicubic_dynamic_spatial_align_corners",
     lambda x: F.interpolate(x, scale_factor=3.0, mode="bicubic", align_corners=True), BICUBIC2,
     ((1, 1, 2, 2), (1, 1, 4, 4), (1, 1, 6, 6), (1, 1, 5, 3))),
    # An output size for dynamic dims (or one that float32 scales cannot give): a shape tensor, scaled by in/out.
    ("nearest2d_dynamic_spatial_fixed_size", lambda x: F.interpolate(x, size=(8, 8)), NEAREST2,
     ((1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 6, 6), (1, 2, 5, 5))),
    ("nearest2d_dynamic_batch_size_of_inexact_scale", lambda x: F.interpolate(x, size=(7, 5)),
     NEAREST2, ((1, 2, 3, 5), (1, 2, 3, 5), (4, 2, 3, 5), (2, 2, 3, 5))),
]


class UpsamplesToTheLateral(torch.nn.Module):
    """FPN's top-down step: the coarser level upsampled to the finer one's size, read from it when the engine runs."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def forward(self, top, lateral):
        return F.interpolate(top, size=lateral.shape[-2:], mode=self.mode) + lateral


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_an_output_size_read_from_another_input(mode, device):
    top = torch_trt.Input(min_shape=(1, 2, 2, 2), opt_shape=(1, 2, 4, 4), max_shape=(2, 2, 8, 8))
    lateral = torch_trt.Input(min_shape=(1, 2, 4, 4), opt_shape=(1, 2, 8, 8), max_shape=(2, 2, 16, 16))
    module = UpsamplesToTheLateral(mode).eval()
    compiled = torch_trt.compile(module, inputs=[top, lateral], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    for high, wide in ((3, 5), (8, 8), (2, 7)):
        x, y = torch.randn(2, 2, high, wide, device=device), torch.randn(2, 2, 2 * high, 2 * wide - 1, device=device)
        torch.testing.assert_close(compiled(x, y), module(x, y))


@pytest.mark.parametrize("name,function,converter,ranges", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_resize_dynamic(name, function, converter, ranges, device):
    specs, inputs = dynamic_inputs([ranges], F32)
    check_converter(function, inputs, {converter}, device, specs=specs)


REFUSED = [  # id, function, input shape, dynamic (min, opt, max) or None, message
    ("fractional_scale_sampling", lambda x: F.interpolate(x, scale_factor=1.5), (1, 2, 5, 5), None,
     "only scale factors giving whole output sizes"),
    ("dynamic_dim_fractional_scale", lambda x: F.interpolate(x, scale_factor=1.5), (1, 2, 6, 6),
     ((1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 6, 6)), "needs a whole-number one"),
    ("dynamic_batch_inexact_scale", lambda x: F.interpolate(x, scale_factor=1 / 3), (2, 2, 3, 3),
     ((1, 2, 3, 3), (1, 2, 3, 3), (4, 2, 3, 3)), "float32 cannot hold exactly"),
]


@pytest.mark.parametrize("name,function,shape,dynamic,message", REFUSED, ids=[c[0] for c in REFUSED])
def test_resize_refused(name, function, shape, dynamic, message, device):
    specs = None
    if dynamic:
        specs, _ = dynamic_inputs([(*dynamic, shape)], F32)
    with pytest.raises(ConversionError, match=message):
        check_converter(function, [torch.randn(shape)], set(), device, specs=specs)


class UpsamplesAndPadsToTheSkip(torch.nn.Module):
    """A UNet decoder step: nn.Upsample by a scale factor, then padding to the skip connection's size."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)

    def forward(self, low, skip):
        x = self.up(low)
        dy, dx = skip.size(2) - x.size(2), skip.size(3) - x.size(3)
        return torch.cat([skip, F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])], 1)


def test_a_scripted_upsample_by_a_scale_factor_converts_with_its_neighbours(device):
    """F.interpolate builds its scale factors in a loop over the input's rank, which specialization folds; the loop
    stayed, and the upsample with it, in PyTorch between two engines."""
    low, skip = torch.randn(1, 2, 4, 4, device=device), torch.randn(1, 2, 9, 9, device=device)
    module = UpsamplesAndPadsToTheSkip().eval()
    settings = {"device": device, "target": "reference", "min_block_size": 1}
    assert "1 segment(s), 1 engine(s)" in str(torch_trt.explain(module, [low, skip], **settings))
    compiled = torch_trt.compile(module, inputs=[low, skip], require_full_compilation=True, **settings)
    torch.testing.assert_close(compiled(low, skip), module(low, skip))
