import pytest
import torch

from harness import check_converter, dynamic_inputs, make_input

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool

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
]


@pytest.mark.parametrize("name,function,converter,shape,dtype", CASES, ids=[c[0] for c in CASES])
def test_reduce(name, function, converter, shape, dtype, device):
    check_converter(function, [make_input(shape, dtype, -4, 5)], {converter}, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("sum_dynamic_batch", lambda x: x.sum(-1), {"aten::sum"}, [((1, 5), (3, 5), (9, 5), (8, 5))], f32),
    ("mean_over_dynamic_dim", lambda x: x.mean(0, keepdim=True), {"aten::mean"}, [((1, 4), (3, 4), (9, 4), (6, 4))],
     f32),
    ("amax_dynamic_batch", lambda x: x.amax(1), {"aten::amax"}, [((1, 3, 2), (2, 3, 2), (5, 3, 2), (4, 3, 2))], i32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_reduce_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype, -4, 5)
    check_converter(function, inputs, converters, device, specs=specs)
