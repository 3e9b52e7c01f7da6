import pytest
import torch

from harness import check_converter, make_input

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool


def _ones(x, *shape):
    """A constant of the trace (folded by lowering): ones of `shape` on x's device."""
    return torch.ones(shape, device=x.device)


CASES = [  # id, function, converters, inputs (shapes of `dtype`, or tensors used as they are), dtype
    ("cat", lambda a, b: torch.cat([a, b]), {"aten::cat"}, [(2, 3), (4, 3)], f32),
    ("cat_last_dim", lambda a, b: torch.cat([a, b], -1), {"aten::cat"}, [(2, 3, 1), (2, 3, 4)], f16),
    ("cat_skips_legacy_empty", lambda a: torch.cat([_ones(a, 0), a], -2), {"aten::cat"}, [(2, 3, 4)], f32),
    ("cat_three_with_constant", lambda a, b: torch.cat([a, b, _ones(a, 2, 2)], 1), {"aten::cat"}, [(2, 3), (2, 1)],
     f32),
    ("cat_int_promoted_by_constant", lambda a, b: torch.cat([a, _ones(a, 1, 3), b]), {"aten::cat"},
     [(2, 3), (1, 3)], i32),
    ("cat_mixed_inputs", lambda a, b: torch.cat([a, b]), {"aten::cat"}, [(2, 3), torch.tensor([[1, 2, 3]], dtype=i32)],
     f16),
    ("cat_bool", lambda a, b: torch.cat([a, b], 0), {"aten::cat"}, [(1, 2), (3, 2)], b8),
    ("cat_1d_single", lambda a: torch.cat([a]) * 2, {"aten::cat"}, [(5,)], f32),
    ("cat_same_tensor", lambda a: torch.cat([a, a, a], -2), {"aten::cat"}, [(2, 3, 4)], i32),
    ("stack", lambda a, b: torch.stack([a, b]), {"aten::stack"}, [(2, 3), (2, 3)], f32),
    ("stack_last_dim", lambda a, b: torch.stack([a, b], -1), {"aten::stack"}, [(2, 3), (2, 3)], f16),
    ("stack_middle_rank3", lambda a, b, c: torch.stack([a, b, c], 1), {"aten::stack"}, [(2, 3, 4)] * 3, i32),
    ("stack_with_constant", lambda a: torch.stack([_ones(a, 3), a], -1), {"aten::stack"}, [(3,)], f32),
    ("stack_bool", lambda a, b: torch.stack([a, b], -2), {"aten::stack"}, [(2, 1), (2, 1)], b8),
    ("stack_mixed_inputs", lambda a, b: torch.stack([a, b]), {"aten::stack"}, [(2,), torch.tensor([True, False])],
     i32),
]


@pytest.mark.parametrize("name,function,converters,inputs,dtype", CASES, ids=[c[0] for c in CASES])
def test_concat(name, function, converters, inputs, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in inputs], converters, device)
