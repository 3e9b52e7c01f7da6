import pytest
import torch
import torch.nn.functional as F

import torch_trt
from harness import check_converter, converted_layers, dynamic_inputs, make_input, scripted

f32, f16, i32 = torch.float32, torch.float16, torch.int32
MM = {"aten::matmul"}
BMM = {"aten::bmm"}
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
    # beta 0 ignores the bias, NaN and inf included
    ("addmm_beta_0", lambda b, x, w: torch.addmm(b, x, w, beta=0), MM,
     [torch.tensor([[float("nan"), float("inf")]]), (3, 4), (4, 2)], f32),
    ("mm", torch.mm, MM, [(3, 4), (4, 5)], f32),
    ("mm_fp16", torch.mm, MM, [(3, 4), (4, 5)], f16),
    ("bmm", torch.bmm, BMM, [(2, 3, 4), (2, 4, 5)], f32),
    ("bmm_fp16", torch.bmm, BMM, [(2, 3, 4), (2, 4, 5)], f16),
]


@pytest.mark.parametrize("name,function,converters,shapes,dtype", CASES, ids=[c[0] for c in CASES])
def test_matmul(name, function, converters, shapes, dtype, device):
    if device == "cuda" and not dtype.is_floating_point:
        pytest.skip("eager PyTorch has no integer matmul on CUDA")
    check_converter(function, [make_input(s, dtype, -5, 6) for s in shapes], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("linear_dynamic_batch", torch.nn.Linear(4, 5), AFFINE, [((1, 4), (3, 4), (8, 4), (6, 4))], f32),
    ("constant_rhs_dynamic_rows", ConstantRhs(4, 5), MM, [((1, 1, 4), (2, 3, 4), (4, 6, 4), (3, 5, 4))], f32),
    ("bmm_dynamic_batch", torch.bmm, BMM, [((1, 3, 4), (2, 3, 4), (6, 3, 4), (5, 3, 4)),
                                          ((1, 4, 2), (2, 4, 2), (6, 4, 2), (5, 4, 2))], f32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_matmul_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)


# ---- baddbmm, addbmm, outer ----

def nan_filled(shape, dtype):
    """A self/input argument full of NaN: beta=0 must ignore it, as PyTorch does."""
    return torch.full(shape, float("nan"), dtype=dtype)


BADDBMM, ADDBMM, OUTER = {"aten::baddbmm"}, {"aten::addbmm"}, {"aten::outer"}

PRODUCT_OPS = [  # id, function, converters, inputs (shapes, or tensors), dtype
    ("baddbmm", torch.baddbmm, BADDBMM, [(2, 3, 5), (2, 3, 4), (2, 4, 5)], f32),
    ("baddbmm_beta_alpha", lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=2.0), BADDBMM,
     [(2, 3, 5), (2, 3, 4), (2, 4, 5)], f32),
    ("baddbmm_broadcast_self", lambda s, a, b: torch.baddbmm(s, a, b, alpha=-1.5), BADDBMM,
     [(5,), (2, 3, 4), (2, 4, 5)], f32),
    ("baddbmm_beta_zero_ignores_nan", lambda s, a, b: torch.baddbmm(s, a, b, beta=0), BADDBMM,
     [nan_filled((2, 3, 5), f32), (2, 3, 4), (2, 4, 5)], f32),
    ("baddbmm_fp16", lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=0.25), BADDBMM,
     [(1, 3, 5), (2, 3, 8), (2, 8, 5)], f16),
    ("addbmm", torch.addbmm, ADDBMM, [(3, 5), (4, 3, 2), (4, 2, 5)], f32),
    ("addbmm_beta_alpha_broadcast", lambda s, a, b: torch.addbmm(s, a, b, beta=3.0, alpha=0.5), ADDBMM,
     [(1, 5), (2, 3, 4), (2, 4, 5)], f32),
    ("addbmm_beta_zero_ignores_nan", lambda s, a, b: torch.addbmm(s, a, b, beta=0.0, alpha=2.0), ADDBMM,
     [nan_filled((3, 5), f32), (2, 3, 4), (2, 4, 5)], f32),
    ("addbmm_fp16", torch.addbmm, ADDBMM, [(3, 5), (2, 3, 8), (2, 8, 5)], f16),
    ("outer", torch.outer, OUTER, [(3,), (4,)], f32),
    ("outer_fp16", torch.outer, OUTER, [(3,), (4,)], f16),
    ("outer_int", torch.outer, OUTER, [(3,), (4,)], i32),
    ("ger_records_outer", torch.ger, OUTER, [(5,), (2,)], f32),
    ("outer_promotes", lambda a, b: torch.outer(a, b.float()), OUTER, [(3,), (4,)], i32),
]


@pytest.mark.parametrize("name,function,converters,shapes,dtype", PRODUCT_OPS, ids=[c[0] for c in PRODUCT_OPS])
def test_product_ops(name, function, converters, shapes, dtype, device):
    if device == "cuda" and dtype == i32 and "outer" not in name:
        pytest.skip("eager PyTorch has no integer matmul on CUDA")
    check_converter(function, [make_input(s, dtype, -5, 6) for s in shapes], converters, device)


PRODUCT_DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("baddbmm_dynamic_batch", lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5), BADDBMM,
     [((1, 3, 5), (2, 3, 5), (6, 3, 5), (4, 3, 5)), ((1, 3, 4), (2, 3, 4), (6, 3, 4), (4, 3, 4)),
      ((1, 4, 5), (2, 4, 5), (6, 4, 5), (4, 4, 5))], f32),
    ("addbmm_dynamic_batch", torch.addbmm, ADDBMM,
     [((3, 5), (3, 5), (3, 5), (3, 5)), ((1, 3, 4), (2, 3, 4), (6, 3, 4), (5, 3, 4)),
      ((1, 4, 5), (2, 4, 5), (6, 4, 5), (5, 4, 5))], f32),
    ("outer_dynamic", torch.outer, OUTER, [((1,), (3,), (8,), (6,)), ((1,), (4,), (8,), (2,))], f32),
]


@pytest.mark.parametrize("name,function,converters,ranges,dtype", PRODUCT_DYNAMIC,
                         ids=[c[0] for c in PRODUCT_DYNAMIC])
def test_product_ops_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)


# ---- einsum ----

EINSUM = {"aten::einsum"}


class ConstantEinsum(torch.nn.Module):
    """einsum of the input with a parameter, which lowering makes a constant operand."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 5))

    def forward(self, x):
        return torch.einsum("bij,jk->bik", x, self.weight)


EINSUM_CASES = [  # id, function, input shapes, dtype
    ("batch_matmul", lambda a, b: torch.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)], f32),
    ("attention_scores", lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k), [(2, 2, 3, 4), (2, 2, 5, 4)], f32),
    ("attention_scores_fp16", lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k), [(2, 2, 3, 8), (2, 2, 5, 8)], f16),
    ("batch_matmul_fp16", lambda a, b: torch.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)], f16),
    ("transpose", lambda x: torch.einsum("ij->ji", x), [(2, 3)], f32),
    ("row_sums", lambda x: torch.einsum("ij->i", x), [(2, 3)], f32),
    ("row_sums_fp16", lambda x: torch.einsum("ij->i", x), [(2, 3)], f16),
    ("sum_all", lambda x: torch.einsum("ijk->", x), [(2, 3, 4)], f32),
    ("implicit_output", lambda a, b: torch.einsum("ij,jk", a, b), [(2, 3), (3, 4)], f32),
    ("dot", lambda a, b: torch.einsum("i,i->", a, b), [(4,), (4,)], f32),
    ("outer", lambda a, b: torch.einsum("i,j->ij", a, b), [(3,), (4,)], f32),
    ("maxvit_uppercase_spaces", lambda q, k: torch.einsum("B G H I D, B G H J D -> B G H I J", q, k),
     [(1, 2, 2, 3, 4), (1, 2, 2, 5, 4)], f32),
    ("implicit_uppercase_first", lambda a, b: torch.einsum("aB,Ab", a, b), [(2, 3), (4, 5)], f32),
    ("mixed_case_labels", lambda a, b: torch.einsum("bA,Ac->cb", a, b), [(2, 3), (3, 4)], f32),
    ("constant_operand", ConstantEinsum(), [(2, 3, 4)], f32),
]


@pytest.mark.parametrize("name,function,shapes,dtype", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum(name, function, shapes, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in shapes], EINSUM, device)


def test_einsum_reduced_precision(device):
    """enabled_precisions runs a two-operand einsum in float16, as it does matmul; the output stays float32."""
    q, k = torch.randn(2, 2, 3, 8), torch.randn(2, 2, 5, 8)
    compiled = check_converter(lambda a, b: torch.einsum("bhqd,bhkd->bhqk", a, b), [q, k], EINSUM, device,
                               rtol=2e-2, atol=2e-2, enabled_precisions={f32, f16})
    with torch.no_grad():
        out = compiled(q.to(device), k.to(device))
    assert out.dtype == f32
    assert not torch.equal(out.cpu(), torch.einsum("bhqd,bhkd->bhqk", q, k)), "enabled_precisions changed nothing"


EINSUM_DYNAMIC = [  # id, function, (min, opt, max, run) shape per input, dtype
    ("attention_dynamic_batch", lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k),
     [((1, 2, 3, 4), (2, 2, 3, 4), (6, 2, 3, 4), (5, 2, 3, 4)), ((1, 2, 5, 4), (2, 2, 5, 4), (6, 2, 5, 4),
                                                                  (5, 2, 5, 4))], f32),
    ("transpose_dynamic_rows", lambda x: torch.einsum("ij->ji", x), [((1, 3), (4, 3), (8, 3), (7, 3))], f32),
    ("reduction_dynamic_rows", lambda x: torch.einsum("ij->i", x), [((1, 3), (4, 3), (8, 3), (7, 3))], f32),
    ("constant_dynamic_batch", ConstantEinsum(), [((1, 3, 4), (2, 3, 4), (6, 3, 4), (4, 3, 4))], f32),
]


@pytest.mark.parametrize("name,function,ranges,dtype", EINSUM_DYNAMIC, ids=[c[0] for c in EINSUM_DYNAMIC])
def test_einsum_dynamic(name, function, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, EINSUM, device, specs=specs)


UNSUPPORTED, REFUSED = "unsupported arguments", "refused at conversion"
EINSUM_FALLBACK = [  # id, function whose einsum TensorRT cannot express, input shapes, dtype, why it runs in PyTorch
    ("ellipsis", lambda x, y: torch.einsum("...ij,...jk->...ik", torch.relu(x), y), [(2, 3, 4), (2, 4, 5)], f32,
     UNSUPPORTED),
    ("diagonal", lambda x, y: torch.einsum("ii->i", torch.relu(x)) + y, [(3, 3), (3,)], f32, UNSUPPORTED),
    ("three_operands", lambda x, y: torch.einsum("ij,jk,kl->il", torch.relu(x), y, y), [(3, 3), (3, 3)], f32,
     UNSUPPORTED),
    ("integer_operands", lambda x, y: torch.einsum("ij,jk->ik", torch.relu(x), y), [(2, 3), (3, 4)], i32, REFUSED),
]


@pytest.mark.parametrize("name,function,shapes,dtype,why", EINSUM_FALLBACK, ids=[c[0] for c in EINSUM_FALLBACK])
def test_einsum_falls_back(name, function, shapes, dtype, why, device):
    """The einsum runs in PyTorch and the report says why; the relu before it still converts."""
    if device == "cuda" and dtype == i32:
        pytest.skip("eager PyTorch has no integer matmul on CUDA")
    inputs = [make_input(s, dtype, -5, 6).to(device) for s in shapes]
    compiled = check_converter(function, inputs, {"aten::relu"}, device, require_full_compilation=False)
    assert "aten::einsum" in str(compiled.graph)
    report = torch_trt.explain(scripted(function, len(inputs)), inputs, target="reference", min_block_size=1)
    reasons = [reason for node, reason in report.fallbacks if node.startswith("aten::einsum")]
    assert reasons and all(why in str(reason) for reason in reasons), str(report)


INTEGER_PRODUCTS = [  # id, function, input shapes
    ("matmul", torch.matmul, [(3, 4), (4, 5)]),
    ("vector_times_batch", torch.matmul, [(4,), (2, 4, 5)]),
    ("baddbmm", lambda s, a, b: torch.baddbmm(s, a, b, beta=2, alpha=3), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
]


@pytest.mark.parametrize("name,function,shapes", INTEGER_PRODUCTS, ids=[c[0] for c in INTEGER_PRODUCTS])
def test_integer_matrix_products_run_in_pytorch(name, function, shapes):
    """TensorRT multiplies floats only, and float32 sums of integers past 2**24 are not exact: 4097 * 4097 came out
    16785408, not 16785409."""
    inputs = [make_input(s, i32, -5, 6) for s in shapes]
    report = torch_trt.explain(scripted(function, len(inputs)), inputs, target="reference", min_block_size=1)
    assert report.engine_count == 0 and any("matrix product runs in PyTorch" in str(reason)
                                            for _, reason in report.fallbacks), str(report)


def test_an_integer_matrix_product_past_2_24_is_exact():
    a, b = torch.tensor([[4097, 1]]), torch.tensor([[4097], [0]])
    compiled = torch_trt.compile(scripted(torch.matmul, 2), [a, b], target="reference", min_block_size=1)
    assert compiled(a, b).item() == 4097 * 4097


def test_a_linear_weight_reaches_the_engine_in_its_own_layout_read_transposed():
    """Lowering reads a linear layer's (out, in) weight through aten::t; the engine keeps the weight's own bytes and
    reads it TRANSPOSE (no transposed copy), so an engine can share the module's tensor (reference/lending.py)."""
    linear = torch.nn.Linear(4, 5).eval()
    compiled = torch_trt.compile(linear, [torch.randn(3, 4)], target="reference", min_block_size=1)
    engine = next(n.output().toIValue() for n in compiled.graph.nodes() if n.kind() == "prim::Constant"
                  and n.output().type().kind() == "TensorType" and n.output().toIValue().dtype == torch.uint8)
    plan, weights = torch_trt.targets.reference.plan.deserialize(engine.numpy())
    (product,) = [layer for layer in plan["layers"] if layer["class"] == "IMatrixMultiplyLayer"]
    assert product["attributes"]["op1"]["name"] == "TRANSPOSE"
    assert any(torch.equal(w, linear.weight.detach().reshape(-1)) for w in weights.values())
    x = torch.randn(3, 4)
    torch.testing.assert_close(compiled(x), linear(x))


class BatchedProducts(torch.nn.Module):
    def forward(self, x, y):
        return torch.bmm(x, y), torch.baddbmm(x[:, :, :1], x, y), torch.addbmm(x[0], x, y)


def test_batched_products_hold_their_batches_equal_as_eager_does(device):
    """matmul broadcasts a batch of 1, bmm raises: the engine returned x's 3 products with y's one matrix."""
    spec = torch_trt.Input(min_shape=(1, 4, 4), opt_shape=(2, 4, 4), max_shape=(8, 4, 4))
    module = BatchedProducts().eval()
    compiled = torch_trt.compile(module, inputs=[spec, spec], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    x, y = torch.randn(3, 4, 4, device=device), torch.randn(3, 4, 4, device=device)
    for result, expected in zip(compiled(x, y), module(x, y)):
        torch.testing.assert_close(result, expected)
    with pytest.raises(RuntimeError, match="assertion failed: bmm: the two batches must hold as many matrices"):
        compiled(x, y[:1])
    with pytest.raises(torch_trt.errors.TorchTRTError, match="batch2 tensor to be: \\[3, 4\\] but got: \\[1, 4\\]"):
        torch_trt.compile(scripted(torch.bmm, 2), inputs=[x, y[:1]], device=device, target="reference",
                          require_full_compilation=True, min_block_size=1)  # static batches of 3 and 1: refused
