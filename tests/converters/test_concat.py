from typing import List

import pytest
import torch

from harness import check_converter, dynamic_inputs, make_input, trace_only

f32, f16, i32, b8 = torch.float32, torch.float16, torch.int32, torch.bool


def _ones(x, shape: List[int]):
    """A constant of the trace (folded by lowering): ones of `shape` on x's device."""
    return torch.ones(shape, device=x.device)


def legacy_empty_case(function):
    """Scripted, the (0,)-shaped ones is not folded: it runs in PyTorch (TensorRT has no zero-volume constants), and the
    Tensor[] holding it cannot enter an engine."""
    return trace_only(function, "scripted, the zero-volume constant runs in PyTorch and its Tensor[] cannot enter the "
                      "engine", scripted_error="reads the non-tensor .* \\(List\\[Tensor\\]\\) from PyTorch")


CASES = [  # id, function, converters, inputs (shapes of `dtype`, or tensors used as they are), dtype
    ("cat", lambda a, b: torch.cat([a, b]), {"aten::cat"}, [(2, 3), (4, 3)], f32),
    ("cat_last_dim", lambda a, b: torch.cat([a, b], -1), {"aten::cat"}, [(2, 3, 1), (2, 3, 4)], f16),
    ("cat_skips_legacy_empty", legacy_empty_case(lambda a: torch.cat([_ones(a, [0]), a], -2)), {"aten::cat"},
     [(2, 3, 4)], f32),
    ("cat_legacy_empty_still_promotes", legacy_empty_case(lambda a: torch.cat([_ones(a, [0]), a])), {"aten::cat"},
     [(3,)], i32),  # float32 ones: an int32 result was silently of the wrong dtype
    ("cat_three_with_constant", lambda a, b: torch.cat([a, b, _ones(a, [2, 2])], 1), {"aten::cat"},
     [(2, 3), (2, 1)], f32),
    ("cat_int_promoted_by_constant", lambda a, b: torch.cat([a, _ones(a, [1, 3]), b]), {"aten::cat"},
     [(2, 3), (1, 3)], i32),
    ("cat_mixed_inputs", lambda a, b: torch.cat([a, b]), {"aten::cat"}, [(2, 3), torch.tensor([[1, 2, 3]], dtype=i32)],
     f16),
    ("cat_bool", lambda a, b: torch.cat([a, b], 0), {"aten::cat"}, [(1, 2), (3, 2)], b8),
    ("cat_1d_single", lambda a: torch.cat([a]) * 2, {"aten::cat"}, [(5,)], f32),
    ("cat_same_tensor", lambda a: torch.cat([a, a, a], -2), {"aten::cat"}, [(2, 3, 4)], i32),
    ("stack", lambda a, b: torch.stack([a, b]), {"aten::stack"}, [(2, 3), (2, 3)], f32),
    ("stack_last_dim", lambda a, b: torch.stack([a, b], -1), {"aten::stack"}, [(2, 3), (2, 3)], f16),
    ("stack_middle_rank3", lambda a, b, c: torch.stack([a, b, c], 1), {"aten::stack"}, [(2, 3, 4)] * 3, i32),
    ("stack_with_constant", lambda a: torch.stack([_ones(a, [3]), a], -1), {"aten::stack"}, [(3,)], f32),
    ("stack_bool", lambda a, b: torch.stack([a, b], -2), {"aten::stack"}, [(2, 1), (2, 1)], b8),
    ("stack_mixed_inputs", lambda a, b: torch.stack([a, b]), {"aten::stack"}, [(2,), torch.tensor([True, False])],
     i32),
]


@pytest.mark.parametrize("name,function,converters,inputs,dtype", CASES, ids=[c[0] for c in CASES])
def test_concat(name, function, converters, inputs, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in inputs], converters, device)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("cat_dynamic_batch", lambda a, b: torch.cat([a, b], 1), {"aten::cat"},
     [((1, 3), (4, 3), (8, 3), (6, 3)), ((1, 2), (4, 2), (8, 2), (6, 2))], f32),
    ("cat_along_dynamic_dim", lambda a, b: torch.cat([a, b]), {"aten::cat"},
     [((1, 3), (2, 3), (5, 3), (4, 3)), ((2, 3), (2, 3), (6, 3), (3, 3))], i32),
    ("stack_dynamic_batch", lambda a, b: torch.stack([a, b], -1), {"aten::stack"},
     [((1, 4), (2, 4), (9, 4), (5, 4))] * 2, f16),
]

@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_concat_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)
