import pytest
import torch

from harness import check_converter, dynamic_inputs

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
    ("sin", torch.sin, "aten::sin", (2, 3), torch.float32, False),
    ("sin_int_promotes", torch.sin, "aten::sin", (5,), torch.int32, False),
    ("cos", torch.cos, "aten::cos", (2, 3), torch.float32, False),
    ("cos_fp16", torch.cos, "aten::cos", (2, 3), torch.float16, False),
    ("erf", torch.erf, "aten::erf", (3, 4), torch.float32, False),
    ("erf_int_promotes", torch.erf, "aten::erf", (3, 4), torch.int32, False),
    ("floor", torch.floor, "aten::floor", (3, 4), torch.float32, False),
    ("floor_fp16", torch.floor, "aten::floor", (3, 4), torch.float16, False),
    ("ceil", torch.ceil, "aten::ceil", (3, 4), torch.float32, False),
    ("ceil_method", lambda x: x.ceil() * 2, "aten::ceil", (2, 2, 2), torch.float32, False),
    ("reciprocal", torch.reciprocal, "aten::reciprocal", (4, 5), torch.float32, True),
    ("reciprocal_int_promotes", torch.reciprocal, "aten::reciprocal", (4,), torch.int32, True),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype,positive", CASES, ids=[c[0] for c in CASES])
def test_unary(name, function, converter, shape, dtype, positive, device):
    x = torch.randn(shape) * 4 if dtype.is_floating_point else torch.randint(-9, 9, shape)
    x = (x.abs() + 0.5 if positive else x).to(dtype)
    check_converter(function, [x], {converter}, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("exp_dynamic_batch", torch.exp, {"aten::exp"}, [((1, 3), (4, 3), (8, 3), (6, 3))], torch.float32),
    ("abs_dynamic_dims", torch.abs, {"aten::abs"}, [((1, 1), (2, 2), (5, 5), (4, 1))], torch.int32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_unary_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)
