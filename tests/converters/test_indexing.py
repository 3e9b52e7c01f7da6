from typing import List

import pytest
import torch
import torch.nn.functional as F

import torch_trt
from harness import check_converter, dynamic_inputs, make_input

f32, f16, i32, i64, b8 = torch.float32, torch.float16, torch.int32, torch.int64, torch.bool


def two(pieces: List[torch.Tensor]):
    first, second = pieces
    return first, second


def three(pieces: List[torch.Tensor]):
    first, second, third = pieces
    return first, second, third


def split_by_size(x):
    return three(x.split(2, 1))


def split_uneven(x):
    return two(torch.split(x, 3))


def split_sizes(x):
    return three(x.split([1, 0, 3], -1))


def split_with_sizes(x):
    return two(x.split_with_sizes([2, 1], 0))


def unsafe_split(x):
    return two(torch.unsafe_split(x, 2, -2))


def unsafe_split_with_sizes(x):
    return two(torch.unsafe_split_with_sizes(x, [3, 1]))


def chunk(x):
    return three(x.chunk(3, -1))


def chunk_fewer(x):
    return two(x.chunk(3))  # 4 rows in chunks of 2: only two pieces


def unsafe_chunk(x):
    return two(torch.unsafe_chunk(x, 2, 1))


def unbind(x):
    return three(x.unbind(-1))


def unbind_first(x):
    return two(torch.unbind(x))


def split_then_add(x):
    first, second = x.split(2)
    return first + second


def ints(*values, dtype=i32):
    return torch.tensor(values, dtype=dtype)


CASES = [  # id, function, converters, inputs (shapes of `dtype`, or tensors used as they are), dtype
    ("gather_dim0", lambda x, i: torch.gather(x, 0, i), {"aten::gather"}, [(3, 4), torch.tensor([[2, 0, 1, 1]], dtype=i32)], f32),
    ("gather_last_dim_fp16", lambda x, i: x.gather(-1, i), {"aten::gather"},
     [(2, 3, 4), torch.tensor([[[3, 0], [1, 1], [2, 2]], [[0, 0], [3, 2], [1, 0]]], dtype=i32)], f16),
    ("gather_int", lambda x, i: x.gather(1, i), {"aten::gather"}, [(2, 5), torch.tensor([[4], [0]], dtype=i32)], i32),
    ("gather_bool_smaller_index", lambda x, i: x.gather(0, i), {"aten::gather"},
     [(4, 3), torch.tensor([[3, 0]], dtype=i32)], b8),
    ("index_one_tensor", lambda x, i: x[i], {"aten::index"}, [(5, 3), ints(4, 0, 4)], f32),
    ("index_middle_dim_negative", lambda x, i: x[:, i], {"aten::index"}, [(2, 5, 3), ints(-1, 1, -5)], f16),
    ("index_last_dim_2d_index", lambda x, i: x[:, :, i], {"aten::index"}, [(2, 3, 4), ints(0, 3, 1, 2).reshape(2, 2)],
     i32),
    ("index_two_leading", lambda x, i, j: x[i, j], {"aten::index"}, [(3, 4, 2), ints(2, 0, -1), ints(3, 3, 0)], f32),
    ("index_two_adjacent_middle", lambda x, i, j: x[:, i, j], {"aten::index"},
     [(2, 3, 4, 5), ints(2, 0), ints(3, -1)], f32),
    ("index_broadcast_hf_mask", lambda m, b, k: m[b, k], {"aten::index"},
     [(2, 8), torch.arange(2, dtype=i32).view(2, 1, 1, 1), torch.arange(8, dtype=i32).view(1, 1, 1, 8)], b8),
    ("index_two_apart", lambda x, i, j: x[i, :, j], {"aten::index"}, [(3, 2, 4), ints(2, 0), ints(1, 3)], b8),
    ("index_int64_constant", lambda x: x[:, torch.tensor([2, -3], device=x.device)], {"aten::index"}, [(2, 3)], f32),
    ("expand", lambda x: x.expand(3, 4), {"aten::expand"}, [(3, 1)], f32),
    ("expand_new_dims_keep", lambda x: x.expand(2, -1, 5, 4), {"aten::expand"}, [(3, 1, 4)], f16),
    ("expand_bool_noop", lambda x: x.expand(2, 3) & x, {"aten::expand"}, [(2, 3)], b8),
    ("expand_int_rank0", lambda x: x.expand(2, 2), {"aten::expand"}, [()], i32),
    ("expand_as", lambda x, y: x.expand_as(y), {"aten::expand_as"}, [(1, 3), (4, 3)], f32),
    ("expand_as_rank", lambda x, y: x.expand_as(y) + y, {"aten::expand_as"}, [(3,), (2, 2, 3)], i32),
    ("expand_as_fp16", lambda x, y: x.expand_as(y), {"aten::expand_as"}, [(2, 1, 1), (2, 3, 4)], f16),
    ("expand_as_bool", lambda x, y: x.expand_as(y), {"aten::expand_as"}, [(1,), (5,)], b8),
    ("repeat", lambda x: x.repeat(2, 3), {"aten::repeat"}, [(2, 3)], f32),
    ("repeat_new_dims", lambda x: x.repeat(2, 1, 3), {"aten::repeat"}, [(3, 2)], f16),
    ("repeat_ones", lambda x: x.repeat(1, 1) + 1, {"aten::repeat"}, [(3, 2)], i32),
    ("repeat_bool", lambda x: x.repeat(3), {"aten::repeat"}, [(2,)], b8),
    ("repeat_interleave", lambda x: x.repeat_interleave(2, dim=1), {"aten::repeat_interleave"}, [(2, 3)], f32),
    ("repeat_interleave_negative_dim", lambda x: x.repeat_interleave(3, dim=-2), {"aten::repeat_interleave"},
     [(2, 3, 4)], f16),
    ("repeat_interleave_flat", lambda x: x.repeat_interleave(2), {"aten::repeat_interleave"}, [(2, 3)], i32),
    ("repeat_interleave_0d", lambda x: x.repeat_interleave(3), {"aten::repeat_interleave"}, [()], f32),
    ("repeat_interleave_once", lambda x: x.repeat_interleave(1, dim=0) + 1, {"aten::repeat_interleave"}, [(2, 3)], i32),
    ("repeat_interleave_output_size", lambda x: torch.repeat_interleave(x, 2, 0, output_size=4),
     {"aten::repeat_interleave"}, [(2, 3)], b8),
    ("tile", lambda x: x.tile((2,)), {"aten::tile"}, [(2, 3)], f32),
    ("tile_more_dims", lambda x: torch.tile(x, (2, 1, 2)), {"aten::tile"},
     [(3, 2)], i32),
    ("flip", lambda x: x.flip(0), {"aten::flip"}, [(4, 3)], f32),
    ("flip_two_negative", lambda x: torch.flip(x, (-1, 1)), {"aten::flip"}, [(2, 3, 4)], f16),
    ("flip_int", lambda x: x.flip(-1), {"aten::flip"}, [(5,)], i32),
    ("flip_bool", lambda x: x.flip(0, 1), {"aten::flip"}, [(2, 2)], b8),
    ("roll", lambda x: x.roll(1, 0), {"aten::roll"}, [(4, 3)], f32),
    ("roll_negative_two_dims", lambda x: torch.roll(x, (-2, 5), (-1, 1)), {"aten::roll"}, [(2, 3, 4)], f16),
    ("roll_flattened", lambda x: x.roll(4), {"aten::roll"}, [(2, 3)], i32),
    ("roll_one_dim_twice", lambda x: torch.roll(x, [1, 2], [0, -2]), {"aten::roll"}, [(3, 2)], f32),  # by both
    ("roll_bool_big_shift", lambda x: x.roll(7, -1), {"aten::roll"}, [(3, 3)], b8),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), {"aten::pixel_shuffle"}, [(1, 8, 2, 3)], f32),
    ("pixel_shuffle_rank3_fp16", lambda x: F.pixel_shuffle(x, 3), {"aten::pixel_shuffle"}, [(9, 1, 2)], f16),
    ("pixel_shuffle_rank5_int", lambda x: F.pixel_shuffle(x, 2), {"aten::pixel_shuffle"}, [(2, 1, 4, 2, 2)], i32),
    ("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), {"aten::pixel_unshuffle"}, [(2, 3, 4, 6)], f32),
    ("masked_fill", lambda x, m: x.masked_fill(m, -1.5), {"aten::masked_fill"}, [(2, 3), torch.rand(2, 3) > 0.5], f32),
    ("masked_fill_broadcast_fp16", lambda x, m: x.masked_fill(m, float("-inf")), {"aten::masked_fill"},
     [(2, 3, 4), torch.rand(3, 1) > 0.5], f16),
    ("masked_fill_int", lambda x, m: x.masked_fill(m, 7), {"aten::masked_fill"}, [(4,), torch.rand(4) > 0.5], i32),
    ("masked_fill_tensor", lambda x, m, v: x.masked_fill(m, v), {"aten::masked_fill"},
     [(2, 3), torch.rand(2, 3) > 0.5, torch.tensor(2.5)], f32),
    ("masked_fill_tensor_bool", lambda x, m, v: torch.masked_fill(x, m, v), {"aten::masked_fill"},
     [(2, 3), torch.rand(1, 3) > 0.5, torch.tensor(True)], b8),
    ("where", lambda c, x, y: torch.where(c, x, y), {"aten::where"}, [torch.rand(2, 3) > 0.5, (2, 3), (2, 3)], f32),
    ("where_broadcast_promote", lambda c, x, y: torch.where(c, x, y), {"aten::where"},
     [torch.rand(3, 1) > 0.5, (2, 1, 4), torch.randint(0, 5, (4,), dtype=i32)], f16),
    ("where_scalar_other", lambda c, x: torch.where(c, x, 0.5), {"aten::where"}, [torch.rand(4) > 0.5, (2, 4)], f32),
    ("where_scalar_self_int", lambda c, x: torch.where(c, 3, x), {"aten::where"}, [torch.rand(2, 2) > 0.5, (2, 2)], i32),
    ("where_scalars", lambda c: torch.where(c, 1.0, -2.0), {"aten::where"}, [torch.rand(2, 3) > 0.5], f32),
    ("where_bool", lambda c, x, y: x.where(c, y), {"aten::where"}, [torch.rand(3) > 0.5, (3,), (3,)], b8),
    ("scatter_src", lambda x, i, s: x.scatter(0, i, s), {"aten::scatter"},
     [(3, 4), torch.tensor([[2, 0, 1, 2]], dtype=i32), torch.randn(1, 4)], f32),
    ("scatter_src_larger", lambda x, i, s: torch.scatter(x, -1, i, s), {"aten::scatter"},
     [(2, 5), torch.tensor([[4, 0], [1, 3]], dtype=i32), torch.randn(3, 3).half()], f16),
    ("scatter_value", lambda x, i: x.scatter(1, i, 9), {"aten::scatter"}, [(2, 4), torch.tensor([[3], [0]], dtype=i32)],
     i32),
    ("scatter_value_bool_rank3", lambda x, i: x.scatter(2, i, 1), {"aten::scatter"},
     [(2, 2, 3), torch.tensor([[[2]], [[0]]], dtype=i32)], b8),
    ("split", split_by_size, {"aten::split"}, [(2, 6)], f32),
    ("split_uneven_then_add", split_uneven, {"aten::split"}, [(5, 2)], f16),
    ("split_consumed_by_add", split_then_add, {"aten::split"}, [(4, 3)], i32),
    ("split_sizes", split_sizes, {"scripted": {"aten::split"}, "traced": {"aten::split_with_sizes"}}, [(2, 4)], f32),
    ("split_with_sizes", split_with_sizes, {"aten::split_with_sizes"}, [(3, 2)], b8),
    ("unsafe_split", unsafe_split, {"aten::unsafe_split"}, [(3, 4, 2)], f32),
    ("unsafe_split_with_sizes", unsafe_split_with_sizes, {"aten::unsafe_split_with_sizes"}, [(4,)], i32),
    ("chunk", chunk, {"aten::chunk"}, [(2, 6)], f32),
    ("chunk_fewer_pieces", chunk_fewer, {"aten::chunk"}, [(4, 3)], f16),
    ("unsafe_chunk", unsafe_chunk, {"aten::unsafe_chunk"}, [(2, 4)], i32),
    ("unbind", unbind, {"aten::unbind"}, [(2, 3)], f32),
    ("unbind_first_bool", unbind_first, {"aten::unbind"}, [(2, 3)], b8),
]


@pytest.mark.parametrize("name,function,converters,inputs,dtype", CASES, ids=[c[0] for c in CASES])
def test_indexing(name, function, converters, inputs, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in inputs], converters, device)


def test_int64_indices_with_truncation(device):
    """HF models index with int64 ids: with truncate_long_and_double they enter the engine as int32."""
    check_converter(lambda x, i: x[:, i], [torch.randn(2, 5), ints(4, -2, dtype=i64)], {"aten::index"}, device,
                    truncate_long_and_double=True)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("expand_dynamic_batch", lambda x: x.expand(-1, 3, 4), {"aten::expand"}, [((1, 3, 1), (2, 3, 1), (8, 3, 1),
                                                                              (5, 3, 1))], f32),
    ("repeat_dynamic_batch", lambda x: x.repeat(1, 2), {"aten::repeat"}, [((1, 3), (2, 3), (6, 3), (4, 3))], i32),
    # GPT-J's rotary embeddings: the last dim's entries repeated, other dims dynamic.
    ("repeat_interleave_dynamic_dims", lambda x: x.repeat_interleave(2, dim=-1), {"aten::repeat_interleave"},
     [((1, 1, 4), (2, 3, 4), (4, 6, 4), (3, 5, 4))], f32),
    ("repeat_interleave_of_a_dynamic_dim", lambda x: x.repeat_interleave(3, dim=0), {"aten::repeat_interleave"},
     [((1, 2), (2, 2), (6, 2), (5, 2))], i32),
    ("repeat_interleave_flat_dynamic", lambda x: x.repeat_interleave(2), {"aten::repeat_interleave"},
     [((1, 3), (2, 3), (6, 3), (4, 3))], f16),
    ("flip_dynamic_batch", lambda x: x.flip(-1), {"aten::flip"}, [((1, 4), (2, 4), (6, 4), (3, 4))], f16),
    ("chunk_dynamic_batch", chunk, {"aten::chunk"}, [((1, 6), (2, 6), (6, 6), (3, 6))], f32),
    ("where_dynamic_batch", lambda x: torch.where(x > 0, x, 0.0), {"aten::where"},
     [((1, 4), (2, 4), (6, 4), (5, 4))], f32),
    # Sizes of dynamic dims are shape tensors: the slice that broadcasts takes them as its size (and stride).
    ("expand_to_runtime_sizes", lambda x, y: x.expand(y.size(0), y.size(1)), {"aten::expand"},
     [((1, 1), (1, 1), (1, 1), (1, 1)), ((1, 1), (2, 4), (6, 9), (5, 7))], f32),
    ("expand_dynamic_dim_keeps", lambda x, y: x.expand(y.size(0), -1, y.size(1)), {"aten::expand"},
     [((1, 1, 1), (2, 3, 1), (6, 5, 1), (4, 2, 1)), ((1, 1), (2, 4), (6, 9), (4, 7))], i32),
    ("expand_as_dynamic", lambda x, y: x.expand_as(y), {"aten::expand_as"},
     [((1, 3), (1, 3), (1, 3), (1, 3)), ((1, 3), (2, 3), (6, 3), (5, 3))], f16),
    # Indexing a dynamic dim: a negative index counts from its size at run time.
    ("index_dynamic_dim_negative", lambda x: x[torch.tensor([0, -1])] * 2, {"aten::index"},
     [((1, 3), (4, 3), (8, 3), (6, 3))], f32),
    # Index tensors of dynamic shapes broadcast together at run time (transformers' padding-mask lookup).
    ("index_dynamic_index_shapes", lambda x: x[torch.arange(x.size(0))[:, None], torch.arange(x.size(1))[None, :] % 2],
     {"aten::index"}, [((1, 2), (3, 4), (6, 8), (5, 7))], f32),
    # Repeats and rolls of dynamic dims: runtime starts and sizes.
    ("repeat_dynamic_dims", lambda x: x.repeat(2, 1, 3), {"aten::repeat"},
     [((1, 1, 2), (2, 4, 2), (3, 9, 2), (2, 7, 2))], f32),
    ("tile_dynamic_dims", lambda x: x.tile((2, 2)), {"aten::tile"}, [((1, 1), (2, 4), (3, 9), (3, 5))], i32),
    ("roll_dynamic_dims", lambda x: torch.roll(x, (-2, 3), (1, 2)), {"aten::roll"},
     [((1, 1, 1), (2, 4, 5), (3, 8, 9), (2, 3, 7))], f32),
    # A dynamic dim that may be the 1 that grows: its stride is read from its size at run time.
    ("expand_as_dynamic_one", lambda x, y: x.expand_as(y) + y, {"aten::expand_as"},
     [((1, 3), (6, 3), (6, 3), (1, 3)), ((6, 3), (6, 3), (6, 3), (6, 3))], f32),
]


@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_indexing_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)


def test_mask_index_stays_in_pytorch():
    """A bool index gives a data-dependent shape: it stays in PyTorch."""
    class MaskIndex(torch.nn.Module):
        def forward(self, x, m):
            return x[m]

    module = torch.jit.script(MaskIndex())
    with pytest.raises(torch_trt.errors.TorchTRTError, match="aten::index"):
        torch_trt.compile(module, inputs=[torch.randn(4), torch.rand(4) > 0.5], target="reference",
                          require_full_compilation=True, min_block_size=1)


def test_split_read_by_index_converts():
    """A Tensor[] read by __getitem__ (not unpacked) hands its tensor to the engine too."""
    class FirstPiece(torch.nn.Module):
        def forward(self, x):
            return x.split(2)[0] * 2

    module, x = torch.jit.script(FirstPiece()), torch.randn(4, 3)
    compiled = torch_trt.compile(module, inputs=[x], target="reference", require_full_compilation=True,
                                 min_block_size=1)
    torch.testing.assert_close(compiled(x), module(x))


class ExpandsToAnotherInputsRows(torch.nn.Module):
    def forward(self, x, y):
        return x.expand(y.size(0), -1) + 1


@pytest.mark.parametrize("rows", [5, 3])
def test_an_expand_of_a_dynamic_dim_to_another_size_fails_as_eager_does(rows, device):
    """Eager raises unless the dim is the size it expands to, or 1; the engine returned the first 2 of x's rows."""
    spec = torch_trt.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(8, 4))
    compiled = torch_trt.compile(ExpandsToAnotherInputsRows().eval(), inputs=[spec, spec], device=device,
                                 target="reference", require_full_compilation=True, min_block_size=1)
    x, y = torch.randn(1, 4, device=device), torch.randn(2, 4, device=device)
    torch.testing.assert_close(compiled(x, y), x.expand(2, -1) + 1)
    torch.testing.assert_close(compiled(y, y), y + 1)
    with pytest.raises(RuntimeError, match="assertion failed: expand: the expanded size of dim 0 must match"):
        compiled(torch.randn(rows, 4, device=device), y)



class RollsByHalf(torch.nn.Module):
    def forward(self, x):
        return x.roll(x.size(1) // 2, 1) * 2


def test_a_roll_by_a_shift_read_from_sizes(device):
    """Scripted, the shift follows the size (a trace fixes it at the example's, in eager too); it ran in PyTorch."""
    spec = torch_trt.Input(min_shape=(1, 1, 2), opt_shape=(2, 4, 2), max_shape=(3, 9, 2))
    compiled = torch_trt.compile(RollsByHalf().eval(), inputs=[spec], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    for rows in (1, 4, 7):
        x = torch.randn(2, rows, 2, device=device)
        torch.testing.assert_close(compiled(x), RollsByHalf()(x))


class RepeatsBySize(torch.nn.Module):
    def forward(self, x):
        return x.repeat(1, x.size(0)) * 2


def test_a_repeat_by_a_count_read_from_sizes(device):
    """Scripted, the count follows the size; it ran in PyTorch."""
    spec = torch_trt.Input(min_shape=(1, 3), opt_shape=(2, 3), max_shape=(5, 3))
    compiled = torch_trt.compile(RepeatsBySize().eval(), inputs=[spec], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    for rows in (1, 3, 5):
        x = torch.randn(rows, 3, device=device)
        torch.testing.assert_close(compiled(x), RepeatsBySize()(x))
