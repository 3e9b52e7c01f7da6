import pytest
import torch

import torch_trt
from harness import check_converter, dynamic_inputs, make_input

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool

# Lowering rewrites every aten::view as aten::reshape (lowering/passes/remove_no_ops.py), in scripts and traces.
CASES = [  # id, function, converters, input shapes, dtype
    ("view_infer", lambda x: x.view(-1, 3), {"aten::reshape"}, [(4, 3)], f32),
    ("view_middle_infer", lambda x: x.view(2, -1, 2), {"aten::reshape"}, [(2, 3, 4)], f16),
    ("view_int", lambda x: x.view(6, 4), {"aten::reshape"}, [(2, 3, 4)], i32),
    ("view_bool_1d", lambda x: x.view(24), {"aten::reshape"}, [(2, 3, 4)], b8),
    ("view_add_unit_dims", lambda x: x.view(1, 4, 1, 3, 1), {"aten::reshape"}, [(4, 3)], f32),
    ("reshape_size", lambda x: x.reshape(x.size(0), -1), {"aten::reshape"}, [(4, 3, 2)], f32),
    ("reshape_rank5", lambda x: x.reshape(2, 1, 3, 2, 2), {"aten::reshape"}, [(4, 6)], f32),
    ("reshape_to_0d", lambda x: x.reshape(()), {"aten::reshape"}, [(1, 1)], f32),
    ("reshape_int", lambda x: x.reshape(-1), {"aten::reshape"}, [(3, 5)], i32),
    ("reshape_as", lambda x, y: x.reshape_as(y), {"aten::reshape_as"}, [(4, 3), (2, 6)], f32),
    ("reshape_as_rank", lambda x, y: x.reshape_as(y), {"aten::reshape_as"}, [(2, 3, 4), (6, 4)], f16),
    ("reshape_as_bool_0d", lambda x, y: x.reshape_as(y), {"aten::reshape_as"}, [(1, 1), ()], b8),
    ("flatten_all", lambda x: x.flatten(), {"aten::flatten"}, [(2, 3, 4)], f32),
    ("unflatten_middle", lambda x: x.unflatten(1, (2, 3)), {"aten::unflatten"}, [(4, 6, 5)], f32),
    ("unflatten_negative_dim", lambda x: x.unflatten(-1, (2, -1)), {"aten::unflatten"}, [(3, 8)], f16),
    ("unflatten_int", lambda x: x.unflatten(0, (1, 2)), {"aten::unflatten"}, [(2, 5)], i32),
    ("flatten_from_1", lambda x: x.flatten(1), {"aten::flatten"}, [(2, 3, 4, 5)], f16),
    ("flatten_middle", lambda x: x.flatten(1, 2), {"aten::flatten"}, [(2, 3, 4, 5)], i32),
    ("flatten_negative", lambda x: x.flatten(-3, -2), {"aten::flatten"}, [(2, 3, 4, 5)], f32),
    ("flatten_one_dim", lambda x: x.flatten(2, 2), {"aten::flatten"}, [(2, 3, 4)], b8),
    ("flatten_0d", lambda x: x.flatten(), {"aten::flatten"}, [()], f32),
    ("flatten_unit_dims", lambda x: x.flatten(0, 1), {"aten::flatten"}, [(1, 1, 4)], f32),
    ("permute_rank4", lambda x: x.permute(0, 2, 3, 1), {"aten::permute"}, [(2, 3, 4, 5)], f32),
    ("permute_rank5", lambda x: x.permute(4, 0, 3, 1, 2), {"aten::permute"}, [(2, 3, 4, 5, 6)], f16),
    ("permute_negative", lambda x: x.permute(-1, 0, -2), {"aten::permute"}, [(2, 3, 4)], i32),
    ("permute_bool", lambda x: x.permute(1, 0), {"aten::permute"}, [(3, 4)], b8),
    ("permute_unit_dims", lambda x: x.permute(2, 1, 0), {"aten::permute"}, [(1, 3, 1)], f32),
    ("transpose", lambda x: x.transpose(0, 1), {"aten::transpose"}, [(3, 4)], f32),
    ("transpose_negative", lambda x: x.transpose(-1, -3), {"aten::transpose"}, [(2, 3, 4, 5)], f16),
    ("transpose_int", lambda x: torch.transpose(x, 1, 2), {"aten::transpose"}, [(2, 3, 4)], i32),
    ("transpose_same_dim", lambda x: x.transpose(1, 1) + 1, {"aten::transpose"}, [(2, 3)], f32),
    ("t_2d", lambda x: x.t(), {"aten::t"}, [(3, 4)], f32),
    ("t_1d", lambda x: x.t() * 2, {"aten::t"}, [(5,)], f32),
    ("t_int", lambda x: x.t(), {"aten::t"}, [(2, 5)], i32),
    ("t_0d", lambda x: x.sum().t() + x, {"aten::t"}, [(2,)], f32),
    ("t_linear_input_weight", torch.nn.functional.linear, {"aten::t", "aten::matmul"}, [(2, 4), (3, 4), (3,)], f32),
    ("unsqueeze_0", lambda x: x.unsqueeze(0), {"aten::unsqueeze"}, [(3, 4)], f32),
    ("unsqueeze_last", lambda x: x.unsqueeze(-1), {"aten::unsqueeze"}, [(3, 4)], f16),
    ("unsqueeze_middle", lambda x: x.unsqueeze(1), {"aten::unsqueeze"}, [(3, 4)], i32),
    ("unsqueeze_0d", lambda x: x.unsqueeze(-1), {"aten::unsqueeze"}, [()], f32),
    ("unsqueeze_negative", lambda x: x.unsqueeze(-3), {"aten::unsqueeze"}, [(3, 4)], b8),
    ("squeeze_all", lambda x: x.squeeze(), {"aten::squeeze"}, [(1, 3, 1, 2, 1)], f32),
    ("squeeze_none", lambda x: x.squeeze() * 2, {"aten::squeeze"}, [(2, 3)], f32),
    ("squeeze_to_0d", lambda x: x.squeeze(), {"aten::squeeze"}, [(1, 1, 1)], i32),
    ("squeeze_dim", lambda x: x.squeeze(1), {"aten::squeeze"}, [(3, 1, 4)], f16),
    ("squeeze_dim_negative", lambda x: x.squeeze(-1), {"aten::squeeze"}, [(3, 4, 1)], b8),
    ("squeeze_dim_not_one", lambda x: x.squeeze(0) * 2, {"aten::squeeze"}, [(3, 1)], f32),
    ("squeeze_dims", lambda x: x.squeeze((0, 2)), {"aten::squeeze"}, [(1, 3, 1, 1)], f32),
    ("squeeze_dim_0d", lambda x: x.squeeze(-1) + 1, {"aten::squeeze"}, [()], f32),
    ("squeeze_dims_mixed", lambda x: x.squeeze((-1, 1)), {"aten::squeeze"}, [(2, 3, 1)], i32),
    ("contiguous_of_a_transpose", lambda x: x.t().contiguous() * 2, {"aten::contiguous"}, [(3, 4)], f32),
    ("contiguous_preserve_format", lambda x: x.contiguous(memory_format=torch.preserve_format) + 1,
     {"aten::contiguous"}, [(2, 3)], i32),
]


@pytest.mark.parametrize("name,function,converters,shapes,dtype", CASES, ids=[c[0] for c in CASES])
def test_views(name, function, converters, shapes, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in shapes], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("flatten_dynamic_batch", lambda x: x.flatten(1), {"aten::flatten"}, [((1, 3, 4), (2, 3, 4), (8, 3, 4),
                                                                               (5, 3, 4))], f32),
    ("permute_dynamic_batch", lambda x: x.permute(1, 2, 0), {"aten::permute"}, [((1, 3, 2), (2, 3, 2), (6, 3, 2),
                                                                                  (4, 3, 2))], i32),
    ("unsqueeze_dynamic_batch", lambda x: x.unsqueeze(1), {"aten::unsqueeze"}, [((1, 3), (2, 3), (6, 3), (5, 3))],
     b8),
    ("transpose_dynamic_batch", lambda x: x.transpose(0, 1), {"aten::transpose"}, [((1, 3), (2, 3), (6, 3),
                                                                                     (3, 3))], f16),
    # Sizes of dynamic dims are shape tensors inside the engine; arithmetic on them adds element-wise layers.
    ("view_dynamic_sizes", lambda x: x.view(x.size(0), x.size(1), 2, -1), {"aten::reshape"},
     [((1, 1, 8), (2, 4, 8), (6, 9, 8), (5, 7, 8))], f32),
    ("view_merge_dynamic_dims", lambda x: x.view(x.size(0) * x.size(1), x.size(2)), {"aten::reshape"},
     [((1, 1, 3), (2, 4, 3), (6, 9, 3), (5, 7, 3))], i32),
    ("reshape_size_arithmetic", lambda x: x.reshape(x.size(0) // 2, (x.size(1) + 1) - 1, x.size(0) % 2 + 2),
     {"aten::reshape"}, [((4, 1), (4, 3), (4, 6), (4, 5)), ], f16),
    ("reshape_size_min", lambda x: x.reshape(min(x.size(0), 8), x.size(1), -1), {"aten::reshape"},
     [((1, 1, 2), (2, 4, 2), (6, 9, 2), (5, 7, 2))], f32),
    ("reshape_split_dynamic_dim", lambda x: x.reshape(-1, 2, x.size(-1) // 2), {"aten::reshape"},
     [((2, 2), (2, 4), (2, 8), (2, 6))], b8),
    # LeViT: back to the shape of a tensor with two dynamic dims, read at run time.
    ("reshape_as_dynamic_dims", lambda x: x.flatten(0, 1).reshape_as(x), {"aten::reshape_as"},
     [((1, 1, 8), (2, 3, 8), (4, 5, 8), (3, 4, 8))], f32),
    ("reshape_as_dynamic_other", lambda x, y: x.reshape_as(y), {"aten::reshape_as"},
     [((1, 6), (2, 6), (6, 6), (5, 6)), ((1, 3, 2), (2, 3, 2), (6, 3, 2), (5, 3, 2))], i32),
    ("flatten_two_dynamic_dims", lambda x: x.flatten(0, 1), {"aten::flatten"},
     [((1, 1, 3, 1), (2, 4, 3, 2), (6, 9, 3, 5), (5, 7, 3, 4))], f32),
    ("unsqueeze_before_two_dynamic_dims", lambda x: x.unsqueeze(0), {"aten::unsqueeze"},
     [((1, 1, 3), (2, 4, 3), (6, 9, 3), (5, 7, 3))], f32),
    ("squeeze_between_dynamic_dims", lambda x: x.squeeze(1), {"aten::squeeze"},
     [((1, 1, 1), (2, 1, 4), (6, 1, 9), (5, 1, 7))], i32),
]


@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_views_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)



class NegatedSizes(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-(-x.size(0)), max(x.size(1), 1), -1)  # aten::neg and prim::max on sizes


def test_scripted_negation_and_max_of_runtime_sizes(device):
    """Scripted int ops on sizes of dynamic dims become element-wise layers on shape tensors. (A trace records
    -size as tensor arithmetic that lowering does not turn back into ints, and folds max() when tracing.)"""
    module = torch.jit.script(NegatedSizes()).to(device)
    spec = torch_trt.Input(min_shape=(1, 1, 2), opt_shape=(2, 4, 2), max_shape=(6, 9, 2))
    compiled = torch_trt.compile(module, inputs=[spec], target="reference", device=device, min_block_size=1,
                                 require_full_compilation=True)
    x = torch.randn(5, 7, 2, device=device)
    torch.testing.assert_close(compiled(x), module(x))


class ContiguousThenStrided(torch.nn.Module):
    def forward(self, x):
        return x.contiguous().as_strided((4,), (1,)) * 2, x.contiguous()


def test_contiguous_makes_the_copy_strided_readers_and_callers_expect(device):
    """as_strided (run in PyTorch) reads the memory contiguous made, and the caller gets a contiguous copy, not its
    strided input: lowering dropped contiguous, so both saw the input's own strides."""
    compiled = torch_trt.compile(torch.jit.script(ContiguousThenStrided()), [torch.randn(5, 4, device=device).t()],
                                 target="reference", min_block_size=1, device=device)
    x = torch.arange(20.0, device=device).reshape(5, 4).t()
    strided, copy = compiled(x)
    torch.testing.assert_close(strided, ContiguousThenStrided()(x)[0])
    assert copy.is_contiguous() and copy.data_ptr() != x.data_ptr()
    torch.testing.assert_close(copy, x)
