import pytest
import torch

import torch_trt
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
    ("floor_int_identity", torch.floor, "aten::floor", (3, 4), torch.int32, False),
    ("ceil_int_identity", torch.ceil, "aten::ceil", (5,), torch.int32, False),
    ("round", torch.round, "aten::round", (3, 4), torch.float32, False),
    ("round_half_even", torch.round, "aten::round", torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5]), torch.float32,
     False),
    ("round_int_identity", torch.round, "aten::round", (3,), torch.int32, False),
    ("trunc", torch.trunc, "aten::trunc", (3, 4), torch.float32, False),
    ("trunc_fp16", torch.trunc, "aten::trunc", (2, 5), torch.float16, False),
    ("trunc_int_identity", lambda x: torch.trunc(x) * 2, "aten::trunc", (4,), torch.int32, False),
    ("sign", torch.sign, "aten::sign", (3, 4), torch.float32, False),
    ("sign_int", torch.sign, "aten::sign", (3, 4), torch.int32, False),
    ("tan", torch.tan, "aten::tan", (2, 3), torch.float32, False),
    ("asin", lambda x: torch.asin(x / 20), "aten::asin", (2, 3), torch.float32, False),
    ("acos_fp16", lambda x: torch.acos(x / 20), "aten::acos", (2, 3), torch.float16, False),
    ("atan", torch.atan, "aten::atan", (2, 3), torch.float32, False),
    ("atan_int_promotes", torch.atan, "aten::atan", (4,), torch.int32, False),
    ("sinh", torch.sinh, "aten::sinh", (2, 3), torch.float32, False),
    ("cosh", torch.cosh, "aten::cosh", (2, 3), torch.float32, False),
    ("asinh", torch.asinh, "aten::asinh", (2, 3), torch.float32, False),
    ("acosh", lambda x: torch.acosh(x + 1), "aten::acosh", (2, 3), torch.float32, True),
    ("atanh", lambda x: torch.atanh(x / 20), "aten::atanh", (2, 3), torch.float32, False),
    ("log2", torch.log2, "aten::log2", (4, 5), torch.float32, True),
    ("log2_int_promotes", torch.log2, "aten::log2", (4,), torch.int32, True),
    ("log10", torch.log10, "aten::log10", (4, 5), torch.float32, True),
    ("log10_fp16", torch.log10, "aten::log10", (4, 5), torch.float16, True),
    ("log1p", torch.log1p, "aten::log1p", (4, 5), torch.float32, True),
    ("log1p_int_promotes", torch.log1p, "aten::log1p", (3,), torch.int32, True),
    ("expm1", torch.expm1, "aten::expm1", (4, 5), torch.float32, False),
    ("expm1_fp16", lambda x: torch.expm1(x / 4), "aten::expm1", (4, 5), torch.float16, False),
    ("isnan", lambda x: torch.isnan(torch.log(x)), "aten::isnan", (3, 4), torch.float32, False),
    ("isnan_int", torch.isnan, "aten::isnan", (3, 4), torch.int32, False),
    ("isinf", lambda x: torch.isinf(x / torch.floor(x / 4)), "aten::isinf", (3, 4), torch.float32, False),
    # Infinities in the input, not from an fp16 overflow that fused kernels computing in fp32 would not see.
    ("isinf_fp16", lambda x: torch.isinf(x * 2), "aten::isinf",
     torch.tensor([[float("inf"), -2.0, 1e-3, 0.0], [3.0, float("-inf"), 0.5, -0.9]]), torch.float16, False),
    ("isinf_int", torch.isinf, "aten::isinf", (2,), torch.int32, False),
    ("neg_int_twice", lambda x: -(-x + 1), "aten::neg", (2, 3), torch.int32, False),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype,positive", CASES, ids=[c[0] for c in CASES])
def test_unary(name, function, converter, shape, dtype, positive, device):
    if isinstance(shape, torch.Tensor):
        x = shape
    else:
        x = torch.randn(shape) * 4 if dtype.is_floating_point else torch.randint(-9, 9, shape)
    x = (x.abs() + 0.5 if positive else x).to(dtype)
    check_converter(function, [x], {converter}, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("exp_dynamic_batch", torch.exp, {"aten::exp"}, [((1, 3), (4, 3), (8, 3), (6, 3))], torch.float32),
    ("abs_dynamic_dims", torch.abs, {"aten::abs"}, [((1, 1), (2, 2), (5, 5), (4, 1))], torch.int32),
    ("trunc_dynamic", torch.trunc, {"aten::trunc"}, [((1, 3), (4, 3), (8, 3), (2, 3))], torch.float32),
    ("neg_int_dynamic", torch.neg, {"aten::neg"}, [((1, 3), (4, 3), (8, 3), (5, 3))], torch.int32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_unary_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)


def _negate(x):
    return -x


def test_integer_neg_is_a_subtraction():
    """TensorRT's NEG takes floats only, though the reference accepts integers: -x on int32 must be 0 - x."""
    import torch_trt.targets.reference as trt
    from torch_trt._settings import CompileSettings
    from torch_trt.conversion.context import ConversionCtx
    from torch_trt.targets.target_logger import target_logger
    from torch_trt.conversion.interpreter import convert_graph

    ctx = ConversionCtx(trt, trt.Builder(target_logger(trt)), CompileSettings(target="reference"))
    convert_graph(ctx, torch.jit.script(_negate).graph, [torch_trt.Input(shape=(2, 3), dtype=torch.int32)])
    layers = [(layer.type, getattr(layer, "op", None)) for layer in ctx.net.definition]
    assert (trt.LayerType.UNARY, trt.UnaryOperation.NEG) not in layers
    assert (trt.LayerType.ELEMENTWISE, trt.ElementWiseOperation.SUB) in layers


INF = float("inf")
EXACT = [  # id, function, converter, input: where the naive layers lost what PyTorch computes
    ("log1p_of_small_values", torch.log1p, {"aten::log1p"}, torch.tensor([1e-8, -1e-5, 1e-3, -0.5, -1.0, INF, -0.0])),
    ("log1p_fp16_in_float32", torch.log1p, {"aten::log1p"}, torch.tensor([1e-3, 0.25], dtype=torch.float16)),
    ("expm1_of_small_values", torch.expm1, {"aten::expm1"}, torch.tensor([1e-8, -1e-5, -100.0, 50.0, INF, -INF, -0.0])),
    ("trunc_keeps_the_sign_of_zero", lambda x: 1 / torch.trunc(x), {"aten::trunc"}, torch.tensor([-0.0, -0.3, 2.7])),
]


@pytest.mark.parametrize("name,function,converters,x", EXACT, ids=[c[0] for c in EXACT])
def test_unary_as_pytorch_computes_it(name, function, converters, x, device):
    check_converter(function, [x], converters, device, rtol=1e-6, atol=1e-30)
