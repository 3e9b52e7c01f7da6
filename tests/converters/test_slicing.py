import pytest
import torch

import torch_trt

from harness import check_converter, converted_layers, dynamic_inputs, make_input

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool
EMBEDDING = torch.nn.Embedding(10, 4)

# Runtime indices are int32: int64 engine inputs need truncate_long_and_double; index_select_constant gathers
# with int64 constant indices.
CASES = [  # id, function, converters, inputs (shapes of `dtype`, or tensors used as they are), dtype
    ("slice", lambda x: x[1:3], {"aten::slice"}, [(4, 3)], f32),
    ("slice_step", lambda x: x[:, ::2], {"aten::slice"}, [(4, 5)], f16),
    ("slice_step_3_offset", lambda x: x[1::3], {"aten::slice"}, [(8, 2)], i32),
    ("slice_negative", lambda x: x[-3:-1], {"aten::slice"}, [(4, 3)], f32),
    ("slice_negative_start", lambda x: x[:, -2:], {"aten::slice"}, [(4, 3)], b8),
    ("slice_end_beyond", lambda x: x[1:100], {"aten::slice"}, [(4, 3)], f32),
    ("slice_start_before", lambda x: x[-100:2], {"aten::slice"}, [(4, 3)], f32),
    ("slice_full", lambda x: x[:, 0:3] * 2, {"aten::slice"}, [(4, 3)], f32),
    ("slice_size_1", lambda x: x[:, :, 0:1], {"aten::slice"}, [(2, 3, 4)], f32),
    ("slice_rank4_last", lambda x: x[..., 1:-1], {"aten::slice"}, [(2, 3, 4, 5)], f16),
    ("select", lambda x: x[1], {"aten::select"}, [(4, 3)], f32),
    ("select_negative", lambda x: x[:, -1], {"aten::select"}, [(4, 3)], f16),
    ("select_last_dim", lambda x: x[..., 0], {"aten::select"}, [(2, 3, 4)], i32),
    ("select_to_0d", lambda x: x[2] + 1, {"aten::select"}, [(5,)], f32),
    ("select_bool", lambda x: x.select(-2, 2), {"aten::select"}, [(2, 3, 4)], b8),
    ("narrow", lambda x: x.narrow(1, 1, 2), {"aten::narrow"}, [(4, 3)], f32),
    ("narrow_negative_start", lambda x: x.narrow(0, -2, 2), {"aten::narrow"}, [(4, 3)], f16),
    ("narrow_negative_dim", lambda x: x.narrow(-1, 0, 1), {"aten::narrow"}, [(2, 3, 4)], i32),
    ("narrow_full", lambda x: x.narrow(0, 0, 4), {"aten::narrow"}, [(4, 3)], b8),
    ("index_select", lambda x, i: x.index_select(0, i), {"aten::index_select"},
     [(4, 3), torch.tensor([3, 0, 3], dtype=i32)], f32),
    ("index_select_negative_dim", lambda x, i: x.index_select(-1, i), {"aten::index_select"},
     [(2, 3, 4), torch.tensor([1, 2], dtype=i32)], f16),
    ("index_select_constant", lambda x: x.index_select(1, torch.arange(2, -1, -2, device=x.device)), {"aten::index_select"}, [(4, 3)], i32),
    ("index_select_bool", lambda x, i: x.index_select(1, i), {"aten::index_select"},
     [(4, 3), torch.tensor([0], dtype=i32)], b8),
    ("index_select_0d_index", lambda x, i: x.index_select(0, i), {"aten::index_select"},
     [(4, 3), torch.tensor(2, dtype=i32)], f32),
    ("embedding", EMBEDDING, {"aten::embedding"}, [torch.tensor([[1, 9, 0], [4, 4, 2]], dtype=i32)], f32),
    ("embedding_1d", EMBEDDING, {"aten::embedding"}, [torch.tensor([7], dtype=i32)], f32),
    ("embedding_0d", EMBEDDING, {"aten::embedding"}, [torch.tensor(3, dtype=i32)], f32),
    ("embedding_input_weight", lambda w, i: torch.nn.functional.embedding(i, w), {"aten::embedding"},
     [(6, 3), torch.tensor([[5], [1]], dtype=i32)], f16),
]


@pytest.mark.parametrize("name,function,converters,inputs,dtype", CASES, ids=[c[0] for c in CASES])
def test_slicing(name, function, converters, inputs, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in inputs], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("slice_static_dim_dynamic_batch", lambda x: x[:, 1:3], {"aten::slice"}, [((1, 4), (2, 4), (8, 4), (5, 4))], f32),
    ("select_static_dim_dynamic_batch", lambda x: x[:, -1], {"aten::select"}, [((1, 3, 2), (2, 3, 2), (6, 3, 2),
                                                                                 (3, 3, 2))], f16),
    ("embedding_dynamic_indices", EMBEDDING, {"aten::embedding"}, [((1, 1), (2, 3), (4, 8), (3, 5))], i32),
    # Bounds on a dynamic dim, or given as runtime sizes, are computed in the engine (shape tensors).
    ("slice_dynamic_dim_from_1", lambda x: x[:, 1:], {"aten::slice"}, [((1, 2), (2, 4), (8, 9), (5, 7))], f32),
    ("slice_dynamic_dim_drop_last", lambda x: x[:, :-1, 1:], {"aten::slice"},
     [((1, 2, 3), (2, 4, 3), (8, 9, 3), (5, 7, 3))], f16),
    ("slice_dynamic_dim_step", lambda x: x[:, 1::2], {"aten::slice"}, [((1, 2), (2, 4), (8, 9), (5, 6))], i32),
    ("slice_to_a_runtime_size", lambda x, y: x[:, : y.size(1)], {"aten::slice"},
     [((2, 16), (2, 16), (2, 16), (2, 16)), ((1, 1), (1, 4), (1, 16), (1, 7))], f32),
    ("slice_from_a_runtime_size", lambda x, y: x[y.size(0) - 1:], {"aten::slice"},
     [((1, 3), (4, 3), (8, 3), (6, 3)), ((1,), (2,), (4,), (3,))], b8),
    ("slice_to_a_wider_runtime_end_is_clamped", lambda x, y: x[:, :y.size(0)], {"aten::slice"},
     [((3, 2), (3, 4), (3, 8), (3, 3)), ((1,), (2,), (10,), (7,))], f32),
    ("slice_from_a_runtime_start_past_the_front_is_clamped", lambda x, y: x[:, -y.size(0):], {"aten::slice"},
     [((3, 2), (3, 4), (3, 8), (3, 3)), ((1,), (2,), (10,), (7,))], f32),
    ("slice_from_a_constant_start_past_the_front_is_clamped", lambda x: x[:, -6:], {"aten::slice"},
     [((2, 2), (2, 8), (2, 16), (2, 3))], f32),
    ("slice_to_a_constant_end_past_the_back_is_clamped", lambda x: x[:, 1:4], {"aten::slice"},
     [((2, 1), (2, 8), (2, 16), (2, 2))], f32),
    ("select_negative_dynamic_dim", lambda x: x[:, -1], {"aten::select"}, [((1, 1, 2), (2, 3, 2), (6, 9, 2),
                                                                             (3, 5, 2))], f32),
    ("narrow_dynamic_dim", lambda x: x.narrow(1, 1, 2), {"aten::narrow"}, [((1, 3), (2, 4), (6, 9), (3, 5))], f32),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_slicing_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype, 0, 10)
    check_converter(function, inputs, converters, device, specs=specs)


def _qkv(x):  # nn.MultiheadAttention's packed projection, split into its three parts
    return x[0] + x[1] * x[2]


def _unbound(x):
    q, k, v = x.unbind(0)
    return q + k * v


@pytest.mark.parametrize("function", [_qkv, _unbound])
@pytest.mark.parametrize("spec", [torch_trt.Input(shape=(3, 2, 4)),
                                  torch_trt.Input(min_shape=(3, 1, 4), opt_shape=(3, 2, 4), max_shape=(3, 8, 4))])
def test_entries_at_static_positions_are_views(function, spec):
    """select and unbind at a known position are slices (views of their input), not gathers: a gather reads
    through an index tensor and checks its range on every call."""
    types = {layer.type.name for layer in converted_layers(function, spec)}
    assert "GATHER" not in types and "SLICE" in types


class NarrowsBySizes(torch.nn.Module):
    def forward(self, x, y):
        return x.narrow(1, 2, x.size(0) - y.size(0) + 1) * 2


def test_a_narrow_of_a_negative_runtime_length_fails_as_eager_does(device):
    """Eager raises "length must be non-negative"; the engine returned an empty slice."""
    spec = torch_trt.Input(min_shape=(1, 6), opt_shape=(4, 6), max_shape=(8, 6))
    compiled = torch_trt.compile(NarrowsBySizes().eval(), inputs=[spec, spec], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    x, y = torch.randn(5, 6, device=device), torch.randn(2, 6, device=device)
    torch.testing.assert_close(compiled(x, y), x.narrow(1, 2, 4) * 2)
    with pytest.raises(RuntimeError, match="assertion failed: narrow: the start and length must lie in dim 1"):
        compiled(y, torch.randn(4, 6, device=device))  # a length of -1
