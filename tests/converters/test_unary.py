import pytest
import torch

from harness import check_converter

CASES = [  # id, function, converter, input shape, dtype, make input positive
    ("exp", torch.exp, "aten::exp", (2, 3), torch.float32, False),
    ("exp_fp16", torch.exp, "aten::exp", (2, 3), torch.float16, False),
    ("log", torch.log, "aten::log", (4, 5), torch.float32, True),
    ("sqrt", torch.sqrt, "aten::sqrt", (4, 5), torch.float32, True),
    ("rsqrt", torch.rsqrt, "aten::rsqrt", (4, 5), torch.float32, True),
    ("abs", torch.abs, "aten::abs", (3, 3, 3), torch.float32, False),
    ("abs_int", torch.abs, "aten::abs", (3, 3), torch.int32, False),
    ("neg", torch.neg, "aten::neg", (7,), torch.float32, False),
    ("neg_int", torch.neg, "aten::neg", (7,), torch.int32, False),
    ("sqrt_int_promotes", torch.sqrt, "aten::sqrt", (4,), torch.int32, True),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype,positive", CASES, ids=[c[0] for c in CASES])
def test_unary(name, function, converter, shape, dtype, positive, device):
    x = torch.randn(shape) * 4 if dtype.is_floating_point else torch.randint(-9, 9, shape)
    x = (x.abs() + 0.5 if positive else x).to(dtype)
    check_converter(function, [x], {converter}, device)
