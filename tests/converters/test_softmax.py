import pytest
import torch
import torch.nn.functional as F

from harness import check_converter, dynamic_inputs

f32, f16 = torch.float32, torch.float16

CASES = [  # id, function, converter, input shape, dtype
    ("softmax_dim0", lambda x: x.softmax(0), "aten::softmax", (3, 4, 5), f32),
    ("softmax_dim1", lambda x: x.softmax(1), "aten::softmax", (3, 4, 5), f32),
    ("softmax_dim2", lambda x: x.softmax(2), "aten::softmax", (3, 4, 5), f32),
    ("softmax_last", lambda x: F.softmax(x, -1), "aten::softmax", (3, 4, 5), f32),
    ("softmax_negative", lambda x: torch.softmax(x, -3), "aten::softmax", (2, 3, 4, 5), f32),
    ("softmax_1d", lambda x: x.softmax(0), "aten::softmax", (7,), f32),
    ("softmax_fp16", lambda x: x.softmax(-1), "aten::softmax", (4, 8), f16),
    ("softmax_dtype_f32", lambda x: torch.softmax(x, 1, dtype=torch.float32), "aten::softmax", (4, 8), f16),
    ("softmax_module", torch.nn.Softmax(dim=1), "aten::softmax", (2, 5, 3), f32),
    ("softmax_internal", lambda x: torch._softmax(x, 1, False), "aten::_softmax", (2, 5, 3), f32),
    ("log_softmax_dim0", lambda x: x.log_softmax(0), "aten::log_softmax", (3, 4, 5), f32),
    ("log_softmax_dim1", lambda x: x.log_softmax(1), "aten::log_softmax", (3, 4, 5), f32),
    ("log_softmax_last", lambda x: F.log_softmax(x, -1), "aten::log_softmax", (3, 4, 5), f32),
    ("log_softmax_1d", lambda x: x.log_softmax(-1), "aten::log_softmax", (9,), f32),
    ("log_softmax_fp16", lambda x: x.log_softmax(-1), "aten::log_softmax", (4, 8), f16),
    ("log_softmax_fp16_spread", lambda x: (x * 20).log_softmax(-1), "aten::log_softmax", (4, 8), f16),
    ("log_softmax_dtype_f32", lambda x: x.log_softmax(0, dtype=torch.float32), "aten::log_softmax", (4, 8), f16),
    ("log_softmax_internal", lambda x: torch._log_softmax(x, -1, False), "aten::_log_softmax", (2, 5), f32),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_softmax(name, function, converter, shape, dtype, device):
    check_converter(function, [torch.randn(shape).to(dtype)], {converter}, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("softmax_dynamic_batch", lambda x: x.softmax(-1), {"aten::softmax"}, [((1, 6), (4, 6), (9, 6), (2, 6))], f32),
    ("log_softmax_over_dynamic_dim", lambda x: x.log_softmax(0), {"aten::log_softmax"},
     [((1, 3), (4, 3), (9, 3), (7, 3))], f32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_softmax_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)
