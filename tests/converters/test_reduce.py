import pytest
import torch

import torch_trt
from harness import FunctionModule, check_converter, dynamic_inputs, make_input

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool

# Distinct values: which of equal values TopK returns first is not specified.
UNIQUE_INT = torch.randperm(12, dtype=torch.int32).reshape(3, 4) - 6
NAN, INF = float("nan"), float("inf")
TIES = torch.tensor([[1., 3., 3., 0.], [2., 2., 2., 2.], [5., 0., 5., 5.]])  # PyTorch returns the first index
NANS = torch.tensor([[NAN, 1., 0.], [3., NAN, NAN], [0., 2., 2.]])  # a NaN is both the max and the min

CASES = [  # id, function, converter, input shape, dtype
    ("sum_all", lambda x: x.sum(), "aten::sum", (2, 3, 4), f32),
    ("sum_dim", lambda x: x.sum(1), "aten::sum", (2, 3, 4), f32),
    ("sum_dims", lambda x: x.sum((0, 2)), "aten::sum", (2, 3, 4), f32),
    ("sum_negative_keepdim", lambda x: x.sum(-1, keepdim=True), "aten::sum", (2, 3, 4), f32),
    ("sum_dims_keepdim", lambda x: x.sum((-3, -1), keepdim=True), "aten::sum", (2, 3, 4), f32),
    ("sum_empty_dims_is_all", lambda x: torch.sum(x, dim=[]), "aten::sum", (2, 3), f32),
    ("sum_1d", lambda x: x.sum(0), "aten::sum", (7,), f32),
    ("sum_fp16", lambda x: x.sum(-1), "aten::sum", (4, 8), f16),
    ("sum_dtype_fp16", lambda x: x.sum(1, dtype=torch.float16), "aten::sum", (2, 3, 4), f32),
    ("sum_all_dtype_f32", lambda x: x.sum(dtype=torch.float32), "aten::sum", (2, 3), f16),
    ("sum_int32_to_int64", lambda x: x.sum(1), "aten::sum", (2, 3, 4), i32),
    ("sum_all_int32", lambda x: x.sum(), "aten::sum", (3, 4), i32),
    ("sum_bool", lambda x: x.sum(-1), "aten::sum", (3, 5), b8),
    ("sum_0d", lambda x: x.sum(), "aten::sum", (), f32),
    ("mean_all", lambda x: x.mean(), "aten::mean", (2, 3, 4), f32),
    ("mean_dim", lambda x: x.mean(1), "aten::mean", (2, 3, 4), f32),
    ("mean_dims_negative_keepdim", lambda x: x.mean((-2, -1), keepdim=True), "aten::mean", (2, 3, 4, 5), f32),
    ("mean_fp16", lambda x: x.mean(0), "aten::mean", (6, 3), f16),
    ("mean_all_fp16", lambda x: x.mean(), "aten::mean", (6, 3), f16),
    ("mean_dtype_f32", lambda x: x.mean(-1, dtype=torch.float32), "aten::mean", (2, 8), f16),
    ("mean_int_dtype", lambda x: x.mean(1, dtype=torch.float32), "aten::mean", (2, 8), i32),
    ("amax_all", lambda x: x.amax(), "aten::amax", (2, 3, 4), f32),
    ("amax_dim", lambda x: x.amax(1), "aten::amax", (2, 3, 4), f32),
    ("amax_dims_keepdim", lambda x: x.amax((0, -1), keepdim=True), "aten::amax", (2, 3, 4), f32),
    ("amax_int32", lambda x: x.amax(-1), "aten::amax", (3, 4), i32),
    ("amax_bool", lambda x: x.amax(-1), "aten::amax", (3, 4), b8),
    ("amin_dim", lambda x: x.amin(0), "aten::amin", (3, 4), f32),
    ("amin_negative_keepdim", lambda x: x.amin(-2, keepdim=True), "aten::amin", (2, 3, 4), f32),
    ("amin_all", lambda x: x.amin(), "aten::amin", (2, 3, 4), f32),
    ("amin_fp16", lambda x: x.amin((1, 2)), "aten::amin", (2, 3, 4), f16),
    ("max_all", lambda x: x.max(), "aten::max", (2, 3, 4), f32),
    ("max_all_int32", lambda x: x.max(), "aten::max", (5,), i32),
    ("max_all_fp16", lambda x: x.max(), "aten::max", (3, 4), f16),
    ("min_all", lambda x: x.min(), "aten::min", (2, 3, 4), f32),
    ("min_all_int32", lambda x: x.min(), "aten::min", (3, 4), i32),
    ("prod_all", lambda x: x.prod(), "aten::prod", (2, 3), f32),
    ("prod_dim", lambda x: x.prod(1), "aten::prod", (2, 3, 4), f32),
    ("prod_negative_keepdim", lambda x: x.prod(-1, keepdim=True), "aten::prod", (2, 3, 4), f32),
    ("prod_int32_to_int64", lambda x: x.prod(0), "aten::prod", (3, 4), i32),
    ("prod_dtype_f32", lambda x: x.prod(1, dtype=torch.float32), "aten::prod", (3, 4), f16),
    ("max_dim", lambda x: x.max(1), "aten::max", (2, 3, 4), f32),
    ("max_dim_keepdim_negative", lambda x: torch.max(x, -1, keepdim=True), "aten::max", (2, 3, 4), f16),
    ("max_dim_values_int", lambda x: x.max(0).values, "aten::max", UNIQUE_INT, i32),
    ("max_dim_0d", lambda x: x.max(0), "aten::max", (), f32),
    ("min_dim", lambda x: x.min(0), "aten::min", (5, 3), f32),
    ("min_dim_keepdim_indices", lambda x: x.min(-2, keepdim=True).indices, "aten::min", (2, 3, 4), f32),
    ("min_dim_int", lambda x: torch.min(x, 1), "aten::min", UNIQUE_INT, i32),
    ("argmax", lambda x: x.argmax(), "aten::argmax", (3, 4), f32),
    ("argmax_dim", lambda x: x.argmax(1), "aten::argmax", (2, 3, 4), f32),
    ("argmax_keepdim_negative", lambda x: torch.argmax(x, -1, keepdim=True), "aten::argmax", (2, 3, 4), f16),
    ("argmax_all_keepdim", lambda x: x.argmax(keepdim=True), "aten::argmax", (2, 3), f32),
    ("argmax_int", lambda x: x.argmax(0), "aten::argmax", UNIQUE_INT, i32),
    ("argmin", lambda x: x.argmin(), "aten::argmin", (3, 4), f32),
    ("argmin_dim", lambda x: x.argmin(0), "aten::argmin", (4, 3), f32),
    ("argmin_int_keepdim", lambda x: x.argmin(1, keepdim=True), "aten::argmin", UNIQUE_INT, i32),
    ("topk", lambda x: x.topk(2), "aten::topk", (3, 5), f32),
    ("topk_smallest_dim0", lambda x: torch.topk(x, 3, 0, largest=False), "aten::topk", (4, 5), f32),
    ("topk_fp16_negative_dim", lambda x: x.topk(1, -2), "aten::topk", (2, 3, 4), f16),
    ("topk_int", lambda x: x.topk(2, 1), "aten::topk", UNIQUE_INT, i32),
    ("topk_all", lambda x: x.topk(5)[0], "aten::topk", (2, 5), f32),
    ("sort", lambda x: x.sort(), "aten::sort", (3, 5), f32),
    ("sort_descending_dim0", lambda x: x.sort(0, descending=True), "aten::sort", (4, 3), f32),
    ("sort_int", lambda x: torch.sort(x, -1), "aten::sort", UNIQUE_INT, i32),
    ("sort_fp16_values", lambda x: x.sort(1).values, "aten::sort", (2, 6, 2), f16),
    ("sort_stable_false", lambda x: torch.sort(x, stable=False, dim=1), "aten::sort", (3, 4), f32),
    ("var_all", lambda x: x.var(), "aten::var", (3, 4), f32),
    ("var_biased", lambda x: torch.var(x, unbiased=False), "aten::var", (3, 4), f32),
    ("var_dim", lambda x: x.var(1), "aten::var", (2, 3, 4), f32),
    ("var_dims_keepdim_fp16", lambda x: x.var((0, -1), keepdim=True), "aten::var", (2, 3, 4), f16),
    ("var_unbiased_dim", lambda x: torch.var(x, [1], False), "aten::var", (2, 5), f32),
    ("var_correction", lambda x: torch.var(x, -1, correction=0), "aten::var", (2, 5), f32),
    ("var_correction_2", lambda x: torch.var(x, 0, correction=2, keepdim=True), "aten::var", (6, 3), f32),
    ("std_all", lambda x: x.std(), "aten::std", (3, 4), f32),
    ("std_dim", lambda x: torch.std(x, [1], True, True), "aten::std", (2, 3, 4), f32),
    ("std_correction", lambda x: x.std(dim=(1, 2), correction=0), "aten::std", (2, 3, 4), f16),
    ("std_biased", lambda x: x.std(unbiased=False), "aten::std", (5,), f32),
    ("vector_norm", lambda x: torch.linalg.vector_norm(x), "aten::linalg_vector_norm", (3, 4), f32),
    ("vector_norm_1_dim", lambda x: torch.linalg.vector_norm(x, 1, -1), "aten::linalg_vector_norm", (3, 4), f32),
    ("vector_norm_neg_inf", lambda x: torch.linalg.vector_norm(x, float("-inf"), (0, 1), True),
     "aten::linalg_vector_norm", (2, 3, 4), f32),
    ("vector_norm_fp16_dtype", lambda x: torch.linalg.vector_norm(x, dim=1, dtype=torch.float32),
     "aten::linalg_vector_norm", (3, 4), f16),
    ("any", lambda x: x.any(), "aten::any", (3, 4), b8),
    ("any_dim", lambda x: x.any(1), "aten::any", (3, 4), b8),
    ("any_dim_keepdim_int", lambda x: torch.any(x, -1, keepdim=True), "aten::any", (3, 4), i32),
    ("any_dims_float", lambda x: x.any((0, 2)), "aten::any", (2, 3, 4), f32),
    ("any_of_no_dims_is_the_truth_values", lambda x: torch.any(x, ()), "aten::any", (2, 3), f32),
    ("all_of_no_dims_is_the_truth_values", lambda x: torch.all(x, (), keepdim=True), "aten::all", (2, 3), f32),
    ("all", lambda x: x.all(), "aten::all", (3, 4), b8),
    ("all_dim", lambda x: (x > -3).all(0), "aten::all", (3, 4), i32),
    ("all_dim_keepdim_float", lambda x: torch.all(x, 1, keepdim=True), "aten::all", (3, 4), f32),
    ("all_dims", lambda x: x.all((-1, -2)), "aten::all", (2, 3, 4), b8),
    ("logsumexp", lambda x: x.logsumexp(1), "aten::logsumexp", (3, 4), f32),
    ("logsumexp_dims_keepdim", lambda x: torch.logsumexp(x, (0, -1), keepdim=True), "aten::logsumexp", (2, 3, 4),
     f32),
    ("logsumexp_large", lambda x: (x * 100).logsumexp(-1), "aten::logsumexp", (3, 4), f32),
    ("logsumexp_fp16", lambda x: x.logsumexp(0), "aten::logsumexp", (3, 4), f16),
    ("cumsum", lambda x: x.cumsum(1), "aten::cumsum", (3, 4), f32),
    ("cumsum_negative_dim_fp16", lambda x: torch.cumsum(x, -1), "aten::cumsum", (2, 3, 4), f16),
    ("cumsum_int_widens", lambda x: x.cumsum(0), "aten::cumsum", (4, 3), i32),
    ("cumsum_bool", lambda x: x.cumsum(-1), "aten::cumsum", (2, 5), b8),
    ("cumsum_dtype", lambda x: x.cumsum(1, dtype=torch.float32), "aten::cumsum", (2, 5), i32),
    ("cumsum_1d", lambda x: x.cumsum(0), "aten::cumsum", (7,), f32),
    ("max_dim_ties", lambda x: x.max(1), "aten::max", TIES, f32),
    ("max_dim_ties_int", lambda x: x.max(1), "aten::max", TIES.int(), i32),
    ("max_dim_ties_bool", lambda x: x.max(0), "aten::max", torch.tensor([True, False, True]), b8),
    ("min_dim_ties_keepdim", lambda x: x.min(0, keepdim=True), "aten::min", TIES, f32),
    ("argmax_ties", lambda x: x.argmax(1), "aten::argmax", TIES, f32),
    ("argmax_all_ties", lambda x: x.argmax(), "aten::argmax", TIES, f32),
    ("max_dim_nan", lambda x: x.max(1), "aten::max", NANS, f32),
    ("min_dim_nan", lambda x: x.min(1), "aten::min", NANS, f32),
    ("argmin_all_nan", lambda x: x.argmin(), "aten::argmin", NANS, f32),
    ("logsumexp_infinite", lambda x: x.logsumexp(1), "aten::logsumexp",
     torch.tensor([[-INF, -INF], [INF, 1.], [NAN, 1.], [1., 2.]]), f32),
    ("std_fp16_squares_past_its_range", lambda x: x.std(), "aten::std",
     torch.tensor([300., 400., 1000., 2000.]).half(), f16),
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_reduce(name, function, converter, shape, dtype, device):
    check_converter(function, [make_input(shape, dtype, -4, 5)], {converter}, device)


# Tracing records Tensor.norm as linalg_vector_norm; scripting keeps aten::norm.
NORM = {"scripted": {"aten::norm"}, "traced": {"aten::linalg_vector_norm"}}
NORMS = [  # id, function, converters, input shape, dtype
    ("norm", lambda x: x.norm(), NORM, (3, 4), f32),
    ("norm_1_dim", lambda x: x.norm(1, 1), NORM, (3, 4), f32),
    ("norm_inf_keepdim", lambda x: x.norm(float("inf"), -1, True), NORM, (2, 3, 4), f32),
    ("norm_3_fp16", lambda x: x.norm(3, -1), NORM, (3, 4), f16),
    ("norm_dim_dtype", lambda x: x.norm(2, [0], False, dtype=torch.float32), NORM, (3, 4), f16),
    ("norm_dtype", lambda x: x.norm(2, dtype=torch.float32), NORM, (3, 4), f16),
    ("norm_fp16_squares_past_its_range", lambda x: x.norm(2, 1), NORM, torch.tensor([[300., 400.]]).half(), f16),
    ("norm_3_fp16_cubes_past_its_range", lambda x: x.norm(3, 1), NORM, torch.tensor([[30., 40.]]).half(), f16),
]


@pytest.mark.parametrize("name,function,converters,shape,dtype", NORMS, ids=[c[0] for c in NORMS])
def test_norm(name, function, converters, shape, dtype, device):
    check_converter(function, [make_input(shape, dtype, -4, 5)], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("sum_dynamic_batch", lambda x: x.sum(-1), {"aten::sum"}, [((1, 5), (3, 5), (9, 5), (8, 5))], f32),
    ("mean_over_dynamic_dim", lambda x: x.mean(0, keepdim=True), {"aten::mean"}, [((1, 4), (3, 4), (9, 4), (6, 4))],
     f32),
    ("amax_dynamic_batch", lambda x: x.amax(1), {"aten::amax"}, [((1, 3, 2), (2, 3, 2), (5, 3, 2), (4, 3, 2))], i32),
    # the element count is read from the shape: var/std over a dynamic dim ran in PyTorch
    ("var_over_dynamic_dim", lambda x: x.var(0), {"aten::var"}, [((2, 4), (3, 4), (9, 4), (6, 4))], f32),
    ("std_over_dynamic_spatial_dims", lambda x: x.std((2, 3), keepdim=True, correction=0), {"aten::std"},
     [((1, 3, 1, 2), (2, 3, 4, 4), (2, 3, 8, 8), (2, 3, 5, 7))], f32),
    ("var_all_of_dynamic", lambda x: x.var(), {"aten::var"}, [((1, 3), (2, 3), (5, 3), (4, 3))], f32),
    ("var_over_dynamic_dim_of_one", lambda x: x.var(0), {"aten::var"}, [((1, 4), (3, 4), (9, 4), (1, 4))], f32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_reduce_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype, -4, 5)
    check_converter(function, inputs, converters, device, specs=specs)


def test_a_float16_mean_of_values_past_its_range_is_eagers(device):
    """PyTorch on the CPU averages float32 values in float32 and casts the mean to float16 (1/3 and 6e4); the engine
    did the cast first (NaN for 7e4 - 7e4)."""
    if device == "cuda":
        pytest.skip("CUDA's eager casts the values first (NaN), and so does the engine's network; but its code is "
                    "inductor's, which keeps a value cast to half in float32 inside a kernel (emulate_precision_casts "
                    "is off) and gives 1/3")
    module = FunctionModule(lambda x: x.mean(1, dtype=torch.float16)).eval()
    x = torch.tensor([[7e4, -7e4, 1.], [6e4, 6e4, 6e4]], device=device)
    compiled = torch_trt.compile(module, [x], target="reference", min_block_size=1, device=device)
    torch.testing.assert_close(compiled(x), module(x), equal_nan=True)



@pytest.mark.parametrize("statistic", [lambda x: x.var(-1), lambda x: x.std(-1, correction=0)], ids=["var", "std"])
def test_variance_around_a_large_mean(statistic, device):
    """The float32 mean's rounding added 7e-3 to a variance of 1 at a mean of 1e6 (eager's rows, on the CPU, are
    exact, as the float64 result here)."""
    x = (1e6 + torch.randn(2, 256, generator=torch.Generator().manual_seed(0))).to(device)
    compiled = torch_trt.compile(FunctionModule(statistic).eval(), inputs=[x], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    torch.testing.assert_close(compiled(x), statistic(x.double()).float())
