import pytest
import torch

from harness import check_converter

f32, f16, i32 = torch.float32, torch.float16, torch.int32

CASES = [  # id, function, converters, input shapes, dtype
    ("add", lambda a, b: a + b, {"aten::add"}, [(2, 3), (2, 3)], f32),
    ("add_broadcast_rank", lambda a, b: a + b, {"aten::add"}, [(4, 2, 3), (3,)], f32),
    ("add_broadcast_ones", lambda a, b: a + b, {"aten::add"}, [(4, 1, 3), (1, 5, 1)], f32),
    ("add_alpha", lambda a, b: torch.add(a, b, alpha=2.5), {"aten::add"}, [(2, 3), (2, 3)], f32),
    ("add_scalar", lambda a: a + 1.5, {"aten::add"}, [(2, 3)], f32),
    ("add_int", lambda a, b: a + b, {"aten::add"}, [(2, 3), (2, 3)], i32),
    ("add_fp16", lambda a, b: a + b, {"aten::add"}, [(2, 3), (3,)], f16),
    ("sub", lambda a, b: a - b, {"aten::sub"}, [(2, 3), (1, 3)], f32),
    ("sub_alpha", lambda a, b: torch.sub(a, b, alpha=3), {"aten::sub"}, [(2, 3), (2, 3)], f32),
    ("rsub", lambda a, b: torch.rsub(a, b, alpha=2), {"aten::sub"}, [(2, 3), (2, 3)], f32),
    ("rsub_scalar", lambda a: 1 - a, {"aten::rsub"}, [(2, 3)], f32),
    ("mul", lambda a, b: a * b, {"aten::mul"}, [(2, 3), (2, 1)], f32),
    ("mul_scalar_int", lambda a: a * 3, {"aten::mul"}, [(2, 3)], i32),
    ("mul_int_by_float", lambda a: a * 0.5, {"aten::mul"}, [(2, 3)], i32),
    ("div", lambda a, b: a / b, {"aten::div"}, [(2, 3), (2, 3)], f32),
    ("div_int_true", lambda a, b: a / b, {"aten::div"}, [(2, 3), (2, 3)], i32),
    ("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"), {"aten::div"}, [(4, 5), (4, 5)], f32),
    ("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), {"aten::div"}, [(4, 5), (4, 5)], f32),
    ("div_trunc_int", lambda a, b: torch.div(a, b, rounding_mode="trunc"), {"aten::div"}, [(4, 5), (4, 5)], i32),
    ("div_floor_int", lambda a, b: torch.div(a, b, rounding_mode="floor"), {"aten::div"}, [(4, 5), (4, 5)], i32),
    ("div_scalar", lambda a: a / 4, {"aten::div"}, [(3,)], f32),
    ("pow", lambda a, b: a.abs() ** b, {"aten::pow"}, [(2, 3), (2, 3)], f32),
    ("pow_scalar", lambda a: a ** 2, {"aten::pow"}, [(2, 3)], f32),
    ("pow_int", lambda a: a ** 2, {"aten::pow"}, [(2, 3)], i32),
    ("pow_scalar_base", lambda a: 2 ** a, {"aten::pow"}, [(2, 3)], f32),
    ("clamp_scalars", lambda a: a.clamp(-0.5, 0.5), {"aten::clamp"}, [(2, 3)], f32),
    ("clamp_min_only", lambda a: a.clamp(min=0.1), {"aten::clamp"}, [(2, 3)], f32),
    ("clamp_tensors", lambda a, lo, hi: a.clamp(lo, lo + hi.abs()), {"aten::clamp"}, [(2, 3), (3,), (2, 3)], f32),
    ("clamp_int", lambda a: a.clamp(1, 4), {"aten::clamp"}, [(2, 3)], i32),
    ("clamp_min_fn", lambda a: torch.clamp_min(a, 0.2), {"aten::clamp_min"}, [(2, 3)], f32),
]


def _input(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(1, 9, shape, dtype=dtype) * (torch.randint(0, 2, shape, dtype=dtype) * 2 - 1)


@pytest.mark.parametrize("name,function,converters,shapes,dtype", CASES, ids=[c[0] for c in CASES])
def test_elementwise(name, function, converters, shapes, dtype, device):
    check_converter(function, [_input(s, dtype) for s in shapes], converters, device)
