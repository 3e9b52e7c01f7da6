import pytest
import torch
import torch.nn.functional as F

from harness import check_converter, dynamic_inputs, make_input

f32, f16, i32 = torch.float32, torch.float16, torch.int32
MM = {"aten::matmul"}
AFFINE = {"aten::matmul", "aten::add"}


class ConstantRhs(torch.nn.Module):
    """x @ weight, with the weight a parameter, so lowering sees a constant."""

    def __init__(self, *shape):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(shape))

    def forward(self, x):
        return torch.matmul(x, self.weight)


class ConstantAddmm(torch.nn.Module):
    """addmm(bias, x, weight, beta=3) with constant weight and bias."""

    def __init__(self):
        super().__init__()
        self.weight, self.bias = torch.nn.Parameter(torch.randn(4, 5)), torch.nn.Parameter(torch.randn(5))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight, beta=3.0)


CASES = [  # id, function or module, converters, input shapes, dtype
    ("dot_1d_1d", torch.matmul, MM, [(4,), (4,)], f32),
    ("vec_1d_2d", torch.matmul, MM, [(4,), (4, 5)], f32),
    ("mat_2d_1d", torch.matmul, MM, [(3, 4), (4,)], f32),
    ("vec_1d_3d", torch.matmul, MM, [(4,), (2, 4, 5)], f32),
    ("mat_3d_1d", torch.matmul, MM, [(2, 3, 4), (4,)], f32),
    ("vec_1d_4d", torch.matmul, MM, [(4,), (2, 3, 4, 5)], f32),
    ("mat_2d_2d", torch.matmul, MM, [(3, 4), (4, 5)], f32),
    ("batch_3d_3d", torch.matmul, MM, [(2, 3, 4), (2, 4, 5)], f32),
    ("batch_3d_2d", torch.matmul, MM, [(2, 3, 4), (4, 5)], f32),
    ("batch_2d_3d", torch.matmul, MM, [(3, 4), (2, 4, 5)], f32),
    ("batch_4d_3d_broadcast", torch.matmul, MM, [(2, 1, 3, 4), (5, 4, 6)], f32),
    ("batch_4d_4d_broadcast", torch.matmul, MM, [(2, 1, 3, 4), (1, 5, 4, 2)], f32),
    ("batch_3d_4d_broadcast", torch.matmul, MM, [(1, 3, 4), (2, 3, 4, 5)], f32),
    ("dot_fp16", torch.matmul, MM, [(8,), (8,)], f16),
    ("vec_1d_3d_fp16", torch.matmul, MM, [(4,), (2, 4, 5)], f16),
    ("mat_2d_2d_fp16", torch.matmul, MM, [(3, 4), (4, 5)], f16),
    ("batch_broadcast_fp16", torch.matmul, MM, [(2, 1, 3, 4), (5, 4, 6)], f16),
    ("mat_2d_2d_int", torch.matmul, MM, [(3, 4), (4, 5)], i32),
    ("vec_1d_3d_int", torch.matmul, MM, [(4,), (2, 4, 5)], i32),
    ("operator_at", lambda a, b: a @ b, MM, [(2, 3, 4), (4,)], f32),
    ("constant_rhs", ConstantRhs(4, 5), MM, [(2, 3, 4)], f32),
    ("constant_rhs_vector", ConstantRhs(4), MM, [(2, 3, 4)], f32),
    ("linear_bias_2d", torch.nn.Linear(4, 5), AFFINE, [(3, 4)], f32),
    ("linear_bias_3d", torch.nn.Linear(4, 5), AFFINE, [(2, 3, 4)], f32),
    ("linear_no_bias_2d", torch.nn.Linear(4, 5, bias=False), MM, [(3, 4)], f32),
    ("linear_no_bias_3d", torch.nn.Linear(4, 5, bias=False), MM, [(2, 3, 4)], f32),
    ("linear_fp16", torch.nn.Linear(4, 5).half(), AFFINE, [(2, 3, 4)], f16),
    ("functional_linear", lambda x, w, b: F.linear(x, w, b), AFFINE, [(2, 3, 4), (5, 4), (5,)], f32),
    ("functional_linear_no_bias", lambda x, w: F.linear(x, w), MM, [(2, 3, 4), (5, 4)], f32),
    ("addmm", torch.addmm, AFFINE, [(5,), (3, 4), (4, 5)], f32),
    ("addmm_beta_alpha", lambda b, x, w: torch.addmm(b, x, w, beta=0.5, alpha=2.0), AFFINE | {"aten::mul"},
     [(3, 5), (3, 4), (4, 5)], f32),
    ("addmm_constant", ConstantAddmm(), AFFINE, [(3, 4)], f32),
    ("mm", torch.mm, MM, [(3, 4), (4, 5)], f32),
    ("mm_fp16", torch.mm, MM, [(3, 4), (4, 5)], f16),
    ("bmm", torch.bmm, MM, [(2, 3, 4), (2, 4, 5)], f32),
    ("bmm_fp16", torch.bmm, MM, [(2, 3, 4), (2, 4, 5)], f16),
]


@pytest.mark.parametrize("name,function,converters,shapes,dtype", CASES, ids=[c[0] for c in CASES])
def test_matmul(name, function, converters, shapes, dtype, device):
    if device == "cuda" and not dtype.is_floating_point:
        pytest.skip("eager PyTorch has no integer matmul on CUDA")
    check_converter(function, [make_input(s, dtype, -5, 6) for s in shapes], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("linear_dynamic_batch", torch.nn.Linear(4, 5), AFFINE, [((1, 4), (3, 4), (8, 4), (6, 4))], f32),
    ("constant_rhs_dynamic_rows", ConstantRhs(4, 5), MM, [((1, 1, 4), (2, 3, 4), (4, 6, 4), (3, 5, 4))], f32),
    ("bmm_dynamic_batch", torch.bmm, MM, [((1, 3, 4), (2, 3, 4), (6, 3, 4), (5, 3, 4)),
                                          ((1, 4, 2), (2, 4, 2), (6, 4, 2), (5, 4, 2))], f32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_matmul_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)
