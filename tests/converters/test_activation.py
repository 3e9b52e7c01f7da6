import pytest
import torch
import torch.nn.functional as F

from harness import check_converter, dynamic_inputs

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
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_activation(name, function, converter, shape, dtype, device):
    check_converter(function, [torch.randn(shape, dtype=dtype) * 3], {converter}, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("gelu_dynamic_batch", F.gelu, {"aten::gelu"}, [((1, 8), (4, 8), (16, 8), (7, 8))], torch.float32),
    ("leaky_relu_dynamic_dims", lambda x: F.leaky_relu(x, 0.2), {"aten::leaky_relu"},
     [((1, 1, 3), (2, 4, 3), (4, 8, 3), (3, 2, 3))], torch.float16),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_activation_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)
