import pytest
import torch
import torch.nn.functional as F

from harness import check_converter, dynamic_inputs
from torch_trt.errors import ConversionError

CASES = [  # id, function, converter, input shape, dtype
    ("relu", torch.relu, "aten::relu", (2, 3), torch.float32),
    ("relu_fp16", torch.relu, "aten::relu", (4, 5, 6), torch.float16),
    ("sigmoid", torch.sigmoid, "aten::sigmoid", (3, 7), torch.float32),
    ("tanh", torch.tanh, "aten::tanh", (2, 2, 2), torch.float32),
    ("gelu_erf", F.gelu, "aten::gelu", (8, 16), torch.float32),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), "aten::gelu", (8, 16), torch.float32),
    ("gelu_fp16", F.gelu, "aten::gelu", (8, 16), torch.float16),
    ("silu", F.silu, "aten::silu", (4, 9), torch.float32),
    ("silu_fp16", F.silu, "aten::silu", (4, 9), torch.float16),
    ("hardtanh", F.hardtanh, "aten::hardtanh", (5, 5), torch.float32),
    ("hardtanh_range", lambda x: F.hardtanh(x, -0.3, 0.7), "aten::hardtanh", (5, 5), torch.float32),
    ("relu6", F.relu6, "aten::relu6", (5, 5), torch.float32),
    ("leaky_relu", F.leaky_relu, "aten::leaky_relu", (3, 4), torch.float32),
    ("leaky_relu_slope", lambda x: F.leaky_relu(x, 0.3), "aten::leaky_relu", (3, 4), torch.float32),
    ("elu", F.elu, "aten::elu", (3, 4), torch.float32),
    ("elu_alpha", lambda x: F.elu(x, 0.5), "aten::elu", (1, 2, 3, 4), torch.float32),
    ("hardsigmoid", F.hardsigmoid, "aten::hardsigmoid", (3, 4), torch.float32),
    ("hardsigmoid_fp16", F.hardsigmoid, "aten::hardsigmoid", (2, 3, 4), torch.float16),
    ("hardswish", F.hardswish, "aten::hardswish", (3, 4), torch.float32),
    ("hardswish_module", torch.nn.Hardswish(), "aten::hardswish", (2, 8), torch.float16),
    ("softplus", F.softplus, "aten::softplus", (3, 4), torch.float32),
    ("softplus_beta_threshold", lambda x: F.softplus(x, beta=2.0, threshold=3.0), "aten::softplus", (4, 5),
     torch.float32),
    ("softplus_large", lambda x: F.softplus(x * 40), "aten::softplus", (4, 5), torch.float32),
    ("softplus_fp16", lambda x: F.softplus(x, 0.5), "aten::softplus", (4, 5), torch.float16),
    ("mish", F.mish, "aten::mish", (3, 4), torch.float32),
    ("mish_large", lambda x: F.mish(x * 40), "aten::mish", (3, 4), torch.float32),
    ("selu", F.selu, "aten::selu", (3, 4), torch.float32),
    ("selu_fp16", torch.selu, "aten::selu", (3, 4), torch.float16),
    ("celu", F.celu, "aten::celu", (3, 4), torch.float32),
    ("celu_alpha", lambda x: F.celu(x, 0.5), "aten::celu", (2, 3, 4), torch.float32),
    ("celu_fp16", lambda x: F.celu(x, 2.0), "aten::celu", (3, 4), torch.float16),
    ("log_sigmoid", F.logsigmoid, "aten::log_sigmoid", (3, 4), torch.float32),
    ("log_sigmoid_extreme", lambda x: F.logsigmoid(x * 100), "aten::log_sigmoid", (3, 4), torch.float32),
    ("log_sigmoid_fp16", F.logsigmoid, "aten::log_sigmoid", (3, 4), torch.float16),
    ("prelu_channels", torch.nn.PReLU(3, init=0.1), "aten::prelu", (2, 3, 4), torch.float32),
    ("prelu_single", torch.nn.PReLU(), "aten::prelu", (2, 3, 4, 5), torch.float32),
    ("prelu_1d", torch.nn.PReLU(), "aten::prelu", (6,), torch.float32),
    ("prelu_2d_fp16", torch.nn.PReLU(5).half(), "aten::prelu", (3, 5), torch.float16),
    ("prelu_kernel", lambda x: torch._prelu_kernel(x, torch.full([1], 0.2, device=x.device)), "aten::_prelu_kernel",
     (2, 3), torch.float32),
    ("glu", F.glu, "aten::glu", (3, 4), torch.float32),
    ("glu_dim0", lambda x: F.glu(x, 0), "aten::glu", (4, 3), torch.float32),
    ("glu_negative_dim", lambda x: F.glu(x, -2), "aten::glu", (2, 6, 3), torch.float16),
    ("glu_module", torch.nn.GLU(1), "aten::glu", (2, 8, 3), torch.float32),
    # F.softsign is x / (1 + |x|) in Python: abs, add and div convert it.
    ("softsign", F.softsign, "aten::abs", (3, 4), torch.float32),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_activation(name, function, converter, shape, dtype, device):
    check_converter(function, [torch.randn(shape, dtype=dtype) * 3], {converter}, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("gelu_dynamic_batch", F.gelu, {"aten::gelu"}, [((1, 8), (4, 8), (16, 8), (7, 8))], torch.float32),
    ("leaky_relu_dynamic_dims", lambda x: F.leaky_relu(x, 0.2), {"aten::leaky_relu"},
     [((1, 1, 3), (2, 4, 3), (4, 8, 3), (3, 2, 3))], torch.float16),
    ("hardswish_dynamic_batch", F.hardswish, {"aten::hardswish"}, [((1, 4), (2, 4), (8, 4), (5, 4))], torch.float32),
    ("prelu_dynamic_batch", torch.nn.PReLU(3, init=0.3), {"aten::prelu"},
     [((1, 3, 2), (2, 3, 2), (6, 3, 2), (4, 3, 2))], torch.float32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_activation_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)


@pytest.mark.parametrize("function,converter", [(torch.sigmoid, "aten::sigmoid"), (torch.tanh, "aten::tanh")],
                         ids=["sigmoid", "tanh"])
def test_float_activations_of_integers(function, converter, device):
    """PyTorch promotes integer inputs of sigmoid and tanh to float32; TensorRT's activations other than RELU take
    floats only, so the converter casts first (it ran in PyTorch, splitting the engine, before)."""
    check_converter(function, [torch.randint(-4, 5, (3, 4), dtype=torch.int32)], {converter}, device)


@pytest.mark.parametrize("function,converter", [
    (F.relu6, "aten::relu6"),
    (lambda x: F.hardtanh(x, -1.5, 2.5), "aten::hardtanh"),  # PyTorch truncates the bounds to -1 and 2
], ids=["relu6", "hardtanh_fractional_bounds"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_clips_of_integers(function, converter, dtype, device):
    """Integers clamp exactly with element-wise MAX and MIN, since CLIP takes floats (they ran in PyTorch before)."""
    check_converter(function, [torch.tensor([[-3, -1, 0, 1], [2, 3, 6, 7]], dtype=dtype)], {converter}, device)


def test_celu_with_a_small_alpha_keeps_large_inputs_finite(device):
    """alpha * elu(x / alpha) overflowed x / alpha to inf for x = 1e36 at alpha 1e-3."""
    check_converter(lambda x: F.celu(x, 1e-3), [torch.tensor([1e36, 1e30, 2.0, 0.0, -1e-4, -1.0])], {"aten::celu"},
                    device)


def test_celu_with_a_negative_alpha_runs_in_pytorch(device):
    """The converter's form is celu only for alpha > 0: another alpha is left to PyTorch, not converted wrong."""
    with pytest.raises(ConversionError, match="only a positive alpha"):
        check_converter(lambda x: F.celu(x, -1.5), [torch.tensor([-1.0, 0.5, 2.0])], set(), device)


@pytest.mark.parametrize("x", [torch.tensor([10.0, 20.0, -30.0]), torch.tensor([5.375, 10.0], dtype=torch.bfloat16)],
                         ids=["float32", "bfloat16_in_float32"])
def test_log_sigmoid_of_large_inputs_keeps_their_tiny_logs(x, device):
    """log(1 + exp(-|x|)) rounded 1 + 2e-9 to 1: log1p keeps it (-2.06e-09 at 20, which the layers made 0)."""
    check_converter(F.logsigmoid, [x], {"aten::log_sigmoid"}, device, rtol=1e-5, atol=1e-30)
