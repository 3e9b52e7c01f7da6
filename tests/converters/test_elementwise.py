import pytest
import torch

import torch_trt

from harness import FunctionModule, check_converter, converted_layers, dynamic_inputs, trace_only

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool


class InSubmodule(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.inner = FunctionModule(function)

    def forward(self, *inputs):
        return self.inner(*inputs)


def in_traced_submodule(function):
    """`function` called by a submodule, whose traced graph keeps the op aliases it calls (torch.multiply stays
    aten::multiply, as in HF ConvBERT); scripting and a trace's top-level graph record their ops (aten::mul)."""
    return trace_only(InSubmodule(function), "only a traced submodule's graph keeps op aliases")


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
    ("multiply", in_traced_submodule(lambda a, b: torch.multiply(a, b)), {"aten::mul"}, [(2, 3), (2, 1)], f32),
    ("multiply_scalar", in_traced_submodule(lambda a: torch.multiply(a, 3)), {"aten::mul"}, [(2, 3)], i32),
    ("multiply_in_place", in_traced_submodule(lambda a, b: (a + 1).multiply_(b)), {"aten::mul"}, [(2, 3), (3,)], f16),
    ("aliases", in_traced_submodule(lambda a, b: (torch.divide(a, b), torch.true_divide(a, 2), torch.subtract(a, b),
                                                  torch.greater(a, b), torch.less_equal(a, 0), torch.clip(a, -1, 1))),
     {"aten::div", "aten::sub", "aten::gt", "aten::le", "aten::clamp"}, [(2, 3), (2, 3)], f32),
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
    ("mul_fp16_by_scalar_beyond_fp16", lambda a: a * 1e5, {"aten::mul"}, [torch.tensor([1e-3, -2e-2, 0.5])], f16),
    ("div_fp16_by_scalar_beyond_fp16", lambda a: a / 1e5, {"aten::div"}, [torch.tensor([1e3, -2e4, 5.0])], f16),
    ("eq", lambda a, b: a == b, {"aten::eq"}, [(2, 3), (2, 3)], i32),
    ("eq_scalar_float", lambda a: a == 0.5, {"aten::eq"}, [(2, 3)], f32),
    ("eq_broadcast_fp16", lambda a, b: torch.eq(a, b), {"aten::eq"}, [(4, 1, 3), (3,)], f16),
    ("eq_bool", lambda a, b: (a > 0) == (b > 0), {"aten::eq", "aten::gt"}, [(2, 3), (2, 3)], i32),
    ("ne", lambda a, b: a != b, {"aten::ne"}, [(2, 3), (1, 3)], i32),
    ("ne_scalar", lambda a: a != 3, {"aten::ne"}, [(2, 3)], i32),
    ("ne_nan", lambda a: (a / a) != (a / a), {"aten::ne"}, [torch.tensor([0.0, 1.0, -2.0])], f32),
    ("lt", lambda a, b: a < b, {"aten::lt"}, [(2, 3), (2, 3)], f32),
    ("lt_scalar_int_by_float", lambda a: a < 1.5, {"aten::lt"}, [(2, 3)], i32),
    ("le", lambda a, b: a <= b, {"aten::le"}, [(3, 4), (4,)], i32),
    ("le_scalar", lambda a: torch.le(a, 2), {"aten::le"}, [(3, 4)], i32),
    ("le_nan", lambda a: (a / a) <= 1.0, {"aten::le"}, [torch.tensor([0.0, 1.0, -2.0])], f32),
    ("gt", lambda a, b: a > b, {"aten::gt"}, [(2, 3), (2, 1)], f16),
    ("gt_scalar", lambda a: a > 0, {"aten::gt"}, [(2, 3)], f32),
    ("ge", lambda a, b: a >= b, {"aten::ge"}, [(2, 3), (2, 3)], i32),
    ("ge_scalar_negative", lambda a: a.ge(-1), {"aten::ge"}, [(5,)], i32),
    ("and_bool", lambda a, b: a & b, {"aten::__and__"}, [(2, 3), (2, 3)], b8),
    ("or_bool_broadcast", lambda a, b: a | b, {"aten::__or__"}, [(2, 3), (3,)], b8),
    ("xor_bool", lambda a, b: a ^ b, {"aten::__xor__"}, [(2, 3), (2, 3)], b8),
    ("bitwise_and", lambda a, b: torch.bitwise_and(a, b), {"aten::bitwise_and"}, [(2, 3), (2, 1)], b8),
    ("bitwise_or", lambda a, b: torch.bitwise_or(a, b), {"aten::bitwise_or"}, [(2, 3), (2, 3)], b8),
    ("bitwise_xor", lambda a, b: torch.bitwise_xor(a, b), {"aten::bitwise_xor"}, [(2, 3), (3,)], b8),
    ("bitwise_not", lambda a: ~a, {"aten::bitwise_not"}, [(2, 3)], b8),
    ("logical_and", lambda a, b: torch.logical_and(a, b), {"aten::logical_and"}, [(2, 3), (2, 3)], b8),
    ("logical_and_int", lambda a, b: torch.logical_and(a > 0, b), {"aten::logical_and"}, [(2, 3), (3,)], i32),
    ("logical_or_float", lambda a, b: torch.logical_or(a, b), {"aten::logical_or"}, [(2, 3), (2, 3)], f32),
    ("logical_xor", lambda a, b: torch.logical_xor(a, b), {"aten::logical_xor"}, [(2, 3), (2, 1)], b8),
    ("logical_not", lambda a: torch.logical_not(a), {"aten::logical_not"}, [(2, 3)], b8),
    ("logical_not_int", lambda a: torch.logical_not(a - 1), {"aten::logical_not"}, [(2, 3)], i32),
    ("maximum", lambda a, b: torch.maximum(a, b), {"aten::maximum"}, [(2, 3), (2, 3)], f32),
    ("maximum_broadcast_int", lambda a, b: torch.maximum(a, b), {"aten::maximum"}, [(2, 3), (3,)], i32),
    ("maximum_bool", lambda a, b: torch.maximum(a, b), {"aten::maximum"}, [(2, 3), (2, 3)], b8),
    ("max_other", lambda a, b: torch.max(a, b), {"aten::max"}, [(2, 3), (1, 3)], f16),
    ("minimum", lambda a, b: torch.minimum(a, b), {"aten::minimum"}, [(2, 3), (2, 1)], f32),
    ("minimum_int", lambda a, b: torch.minimum(a, b), {"aten::minimum"}, [(2, 3), (2, 3)], i32),
    ("min_other", lambda a, b: torch.min(a, b), {"aten::min"}, [(4, 2, 3), (3,)], f32),
    ("remainder", lambda a, b: torch.remainder(a, b), {"aten::remainder"}, [(4, 5), (4, 5)], i32),
    ("remainder_operator", lambda a, b: a % b, {"aten::remainder"}, [(4, 5), (5,)], i32),
    ("remainder_scalar", lambda a: a % 3, {"aten::remainder"}, [(4, 5)], i32),
    ("remainder_scalar_negative", lambda a: torch.remainder(a, -3), {"aten::remainder"}, [(4, 5)], i32),
    ("remainder_scalar_tensor", lambda a: torch.remainder(7, a), {"aten::remainder"}, [(4, 5)], i32),
    ("fmod", lambda a, b: torch.fmod(a, b), {"aten::fmod"}, [(4, 5), (4, 5)], i32),
    ("fmod_scalar", lambda a: torch.fmod(a, -3), {"aten::fmod"}, [(4, 5)], i32),
]


def _input(shape, dtype):
    if isinstance(shape, torch.Tensor):
        return shape.to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
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
    ("le_dynamic_broadcast", lambda a, b: a <= b, {"aten::le"}, [((1, 3), (2, 3), (6, 3), (5, 3)),
                                                                 ((3,), (3,), (3,), (3,))], i32),
    ("remainder_scalar_dynamic", lambda a: a % -3, {"aten::remainder"}, [((1, 2), (3, 2), (6, 2), (4, 2))], i32),
    # dynamic dims derived differently (2 * rows of a, rows of b), equal when the engine runs
    ("add_dynamic_dims_of_different_origins", lambda a, b: torch.cat([a, a]) + b, {"aten::cat", "aten::add"},
     [((1, 3), (2, 3), (4, 3), (3, 3)), ((1, 3), (4, 3), (8, 3), (6, 3))], f32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_elementwise_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype, low=1)
    check_converter(function, inputs, converters, device, specs=specs)


INF = float("inf")
EXACT = [  # id, function, converters, inputs: values PyTorch computes otherwise than the naive layers did
    ("add_alpha_scales_in_the_result_dtype", lambda a, b: torch.add(a, b, alpha=3), {"aten::add"},
     [torch.tensor([1]), torch.tensor([2 ** 30], dtype=torch.int32)]),
    ("add_alpha_half_other", lambda a, b: torch.add(a, b, alpha=3), {"aten::add"},
     [torch.tensor([1.0]), torch.tensor([30000.0], dtype=torch.float16)]),
    ("div_half_by_a_tiny_scalar", lambda a: a / 1e-8, {"aten::div"}, [torch.tensor([1e-4], dtype=torch.float16)]),
    ("pow_half_and_minus_half_are_square_roots", lambda a: (a ** 0.5, torch.pow(a, -0.5)), {"aten::pow"},
     [torch.tensor([-INF, 4.0, 0.0])]),
    ("pow_int_squared_past_float32", lambda a: a ** 2, {"aten::pow"}, [torch.tensor([12345, -3, 2 ** 20])]),
    ("pow_int_cubed", lambda a: a ** 3, {"aten::pow"}, [torch.tensor([1234, -3, 7], dtype=torch.int32)]),
    ("rounded_half_divisions_by_a_python_float", lambda a: (a // 0.1, torch.div(a, -0.3, rounding_mode="trunc")),
     {"aten::floor_divide", "aten::div"}, [torch.tensor([-7.5, 3.7, 100.3], dtype=torch.float16)]),
    ("rounded_half_divisions_by_tensors", lambda a, b: (a // b, torch.div(a, b, rounding_mode="trunc")),
     {"aten::floor_divide", "aten::div"}, [(torch.randn(4096, generator=torch.Generator().manual_seed(0)) * 1e3).half(),
                                          (torch.randn(4096, generator=torch.Generator().manual_seed(1)) / 20).half()]),
    ("rounded_half_division_of_a_python_float", trace_only(lambda b: torch.div(0.3, b, rounding_mode="trunc"),
                                                           "TorchScript has no div of a number by a tensor"),
     {"aten::div"}, [torch.tensor([0.01, 0.02, 1e-3, 0.3, 0.15, 0.06], dtype=torch.float16)]),
    ("floor_divide_nan_by_infinity_is_nan", lambda a, inf: (a // inf, torch.div(a, -inf, rounding_mode="floor")),
     {"aten::floor_divide", "aten::div", "aten::neg"}, [torch.tensor([float("nan"), 5.0, -5.0]), torch.tensor(INF)]),
    ("log1p_and_expm1_of_large_values", lambda a, b: (torch.log1p(a), torch.expm1(b)), {"aten::log1p", "aten::expm1"},
     [torch.tensor([1e36, 5e36, 3.4e38]), torch.tensor([84.0, 88.0, 88.7])]),
    ("mul_half_by_a_0d_float_tensor", lambda a, k: a * k, {"aten::mul"},
     [torch.tensor([1e-3, -0.5], dtype=torch.float16), torch.tensor(1e5)]),
    ("clamp_by_0d_tensors_keeps_the_dtype", lambda a, low, high: torch.clamp(a, low, high), {"aten::clamp"},
     [torch.tensor([1, 5], dtype=torch.int32), torch.tensor(2), torch.tensor(3)]),
    ("clamp_bfloat16_by_float_0d_tensors", lambda a, low, high: torch.clamp(a, low, high), {"aten::clamp"},
     [torch.tensor([1.0, 5.0], dtype=torch.bfloat16), torch.tensor(2.0), torch.tensor(3.0)]),
]


# Where eager PyTorch on CUDA computes otherwise than on the CPU, and engines keep the CPU's result.
CPU_RESULT_ONLY = {
    "rounded_half_divisions_by_tensors": "CUDA's eager kernel divides half tensors in float32 before rounding down; "
                                         "the CPU's rounds the quotient to half first, as the engine does",
    "rounded_half_division_of_a_python_float": "CUDA's eager kernel takes a Python-number dividend at float32's "
                                               "precision; the CPU's rounds it to half, as the engine does",
    "mul_half_by_a_0d_float_tensor": "CUDA's eager kernel rounds a 0-d CUDA tensor to half before the product "
                                     "(1e5 -> inf); a fused engine keeps it in float32, as TensorRT's fused kernels do",
}


@pytest.mark.parametrize("name,function,converters,inputs", EXACT, ids=[c[0] for c in EXACT])
def test_elementwise_as_pytorch_computes_it(name, function, converters, inputs, device):
    if device == "cuda" and name in CPU_RESULT_ONLY:
        pytest.skip(CPU_RESULT_ONLY[name])
    check_converter(function, inputs, converters, device)


class PlusItsWidth(torch.nn.Module):
    def forward(self, x):
        return x.amax() + x.size(1)  # a 0-d int32 tensor plus a Python int: int32


def test_a_runtime_size_promotes_as_the_python_int_it_is(device):
    """A dynamic size is an int to type promotion, not a 0-d int64 tensor (which made the sum int64)."""
    spec = torch_trt.Input(min_shape=(1, 2), opt_shape=(2, 4), max_shape=(4, 8), dtype=torch.int32)
    compiled = torch_trt.compile(torch.jit.script(PlusItsWidth()), [spec], target="reference", min_block_size=1,
                                 require_full_compilation=True, device=device)
    for shape in ((2, 3), (4, 8)):
        x = torch.randint(-5, 5, shape, dtype=torch.int32, device=device)
        torch.testing.assert_close(compiled(x), PlusItsWidth()(x))


class FloatRemainders(torch.nn.Module):
    def forward(self, a, b):
        return torch.remainder(a * 1, b), torch.fmod(a * 1, b), (a * 1) % 0.1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_a_floating_point_remainder_runs_in_pytorch(dtype, device):
    """TensorRT has no exact remainder: a - round(a / b) * b gave 0 for 1e10 % 7 (eager 4) and 1.0 % 0.1 (eager 0.1),
    and -inf for 1e30 % 1e-30. Integer ones convert (CASES)."""
    a = torch.tensor([1e10, -1e10, 1.0, 100.3, -4.0, -0.0, INF, 7.5, 1e30], device=device)
    b = torch.tensor([7.0, 7.0, 0.1, 0.1, 2.0, 2.0, 2.0, INF, 1e-30], device=device)
    a, b = a.to(dtype), b.to(dtype)
    module = torch.jit.script(FloatRemainders())
    report = torch_trt.explain(module, [a, b], target="reference", min_block_size=1)
    fallbacks = sorted(node.split(" ")[0] for node, _ in report.fallbacks)
    assert fallbacks == ["aten::fmod", "aten::remainder", "aten::remainder"], fallbacks
    compiled = torch_trt.compile(module, [a, b], target="reference", min_block_size=1, device=device)
    for got, want in zip(compiled(a, b), FloatRemainders()(a, b)):
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
        assert torch.equal(torch.signbit(got), torch.signbit(want))


class TenthPower(torch.nn.Module):
    def forward(self, x):
        return (x * 1) ** 10 + 1


class PowersOfSeven(torch.nn.Module):
    def forward(self, x):
        return torch.pow(7, x * 1) + 1


class OwnPowers(torch.nn.Module):
    def forward(self, x):
        return (x * 1) ** x.abs() + 1


@pytest.mark.parametrize("module", [TenthPower(), PowersOfSeven(), OwnPowers()], ids=lambda m: type(m).__name__)
def test_an_integer_power_past_products_runs_in_pytorch(module, device):
    """TensorRT's POW takes floats: 7 ** 10 came out as 282475264 (float32's nearest) and 9 ** 10 in int32 saturated
    where PyTorch wraps. Only a constant power up to 8 converts (as products)."""
    x = torch.tensor([7, 9, 3], device=device)
    report = torch_trt.explain(torch.jit.script(module), [x], target="reference", min_block_size=1)
    assert [node.split(" ")[0] for node, _ in report.fallbacks] == ["aten::pow"]
    for inputs in (x, x.int()):
        compiled = torch_trt.compile(torch.jit.script(module), [inputs], target="reference", min_block_size=1,
                                     device=device)
        assert torch.equal(compiled(inputs), module(inputs))
