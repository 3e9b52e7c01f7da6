import pytest
import torch

from harness import check_converter, dynamic_inputs

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
    ("sub_scalar", lambda a: a - 2, {"aten::sub"}, [(2, 3)], f32),
    ("sub_scalar_int", lambda a: torch.sub(a, 2, alpha=3), {"aten::sub"}, [(2, 3)], i32),
    # TorchScript records torch.rsub(a, b) as sub(b, a), scripted and traced.
    ("rsub", lambda a, b: torch.rsub(a, b, alpha=2), {"aten::sub"}, [(2, 3), (2, 3)], f32),
    ("rsub_broadcast_int", lambda a, b: torch.rsub(a, b), {"aten::sub"}, [(2, 3), (3,)], i32),
    # Scripting turns `1 - a` into neg(a) + 1; tracing records rsub(a, 1).
    ("rsub_scalar", lambda a: 1 - a, {"scripted": {"aten::neg", "aten::add"}, "traced": {"aten::rsub"}}, [(2, 3)],
     f32),
    ("rsub_scalar_fn", lambda a: torch.rsub(a, 1.5, alpha=2), {"aten::rsub"}, [(2, 3)], f32),
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
    ("div_scalar_int", lambda a: a / 4, {"aten::div"}, [(3,)], i32),
    ("div_scalar_floor", lambda a: torch.div(a, -3, rounding_mode="floor"), {"aten::div"}, [(2, 5)], f32),
    ("div_scalar_trunc_int", lambda a: torch.div(a, -3, rounding_mode="trunc"), {"aten::div"}, [(2, 5)], i32),
    ("floor_divide", lambda a, b: torch.floor_divide(a, b), {"aten::floor_divide"}, [(4, 5), (4, 5)], f32),
    ("floor_divide_int", lambda a, b: a // b, {"aten::floor_divide"}, [(4, 5), (5,)], i32),
    ("floor_divide_scalar", lambda a: torch.floor_divide(a, 3), {"aten::floor_divide"}, [(4, 5)], i32),
    ("floor_divide_scalar_float", lambda a: a // 0.7, {"aten::floor_divide"}, [(4, 5)], f32),
    ("pow", lambda a, b: a.abs() ** b, {"aten::pow"}, [(2, 3), (2, 3)], f32),
    ("pow_scalar", lambda a: a ** 2, {"aten::pow"}, [(2, 3)], f32),
    ("pow_int", lambda a: a ** 2, {"aten::pow"}, [(2, 3)], i32),
    ("pow_scalar_base", lambda a: 2 ** a, {"aten::pow"}, [(2, 3)], f32),
    ("clamp_scalars", lambda a: a.clamp(-0.5, 0.5), {"aten::clamp"}, [(2, 3)], f32),
    ("clamp_min_only", lambda a: a.clamp(min=0.1), {"aten::clamp"}, [(2, 3)], f32),
    ("clamp_tensors", lambda a, lo, hi: a.clamp(lo, lo + hi.abs()), {"aten::clamp"}, [(2, 3), (3,), (2, 3)], f32),
    ("clamp_int", lambda a: a.clamp(1, 4), {"aten::clamp"}, [(2, 3)], i32),
    ("clamp_min_fn", lambda a: torch.clamp_min(a, 0.2), {"aten::clamp_min"}, [(2, 3)], f32),
    ("clamp_max_fn", lambda a: torch.clamp_max(a, -0.2), {"aten::clamp_max"}, [(2, 3)], f32),
    ("clamp_max_int", lambda a: a.clamp_max(3), {"aten::clamp_max"}, [(2, 3)], i32),
]


def _input(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(1, 9, shape, dtype=dtype) * (torch.randint(0, 2, shape, dtype=dtype) * 2 - 1)


@pytest.mark.parametrize("name,function,converters,shapes,dtype", CASES, ids=[c[0] for c in CASES])
def test_elementwise(name, function, converters, shapes, dtype, device):
    check_converter(function, [_input(s, dtype) for s in shapes], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("add_dynamic_batch_broadcast", lambda a, b: a + b, {"aten::add"}, [((1, 3), (4, 3), (8, 3), (2, 3)),
                                                                         ((3,), (3,), (3,), (3,))], f32),
    ("mul_dynamic_both", lambda a, b: a * b, {"aten::mul"}, [((1, 2), (3, 2), (6, 2), (5, 2))] * 2, f32),
    ("div_scalar_dynamic", lambda a: a / 4, {"aten::div"}, [((1, 1), (2, 3), (4, 6), (3, 5))], f16),
    ("floor_divide_scalar_dynamic", lambda a: a // 3, {"aten::floor_divide"}, [((1, 4), (2, 4), (9, 4), (7, 4))], i32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_elementwise_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype, low=1)
    check_converter(function, inputs, converters, device, specs=specs)
