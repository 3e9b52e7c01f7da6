import pytest
import torch
import torch.nn.functional as F

import torch_trt
from harness import check_converter, dynamic_inputs, make_input

f32, f16, b8 = torch.float32, torch.float16, torch.bool
SDPA = {"aten::scaled_dot_product_attention"}


def _padding_mask(batch, source):
    """A bool [batch, 1, 1, source] key padding mask (True = attend); batch 1's keys are all padding."""
    mask = torch.ones(batch, 1, 1, source, dtype=b8)
    mask[1] = False
    mask[0, ..., -2:] = False
    return mask


def _additive_mask(batch, source, dtype):
    """HuggingFace's float mask: 0 where attending, the dtype's lowest value elsewhere."""
    keep = torch.ones(batch, 1, 1, source, dtype=b8)
    keep[0, ..., -1] = False
    return torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, torch.finfo(dtype).min)


def _inf_mask(length, source):
    """A float mask with -inf entries and one fully masked row (eager gives zeros there)."""
    mask = torch.zeros(length, source)
    mask[0, 1] = mask[1] = float("-inf")
    return mask


CASES = [  # id, function, inputs (shapes of `dtype`, or tensors used as they are), dtype
    ("basic", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)], f32),
    ("fp16", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(1, 2, 5, 16)] * 3, f16),
    ("rank3", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(3, 4, 8), (3, 7, 8), (3, 7, 5)], f32),
    ("value_head_size_differs", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
     [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 6)], f32),
    ("scale", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3), [(2, 2, 3, 4)] * 3, f32),
    ("causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [(2, 2, 5, 4)] * 3, f32),
    ("causal_more_keys", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [(1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4)], f16),
    ("causal_more_queries", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [(1, 1, 6, 4), (1, 1, 3, 4), (1, 1, 3, 4)], f32),
    ("bool_mask_padding", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8), _padding_mask(2, 5)], f32),
    ("bool_mask_fp16_2d", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [(2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), torch.rand(3, 5) > 0.3], f16),
    ("float_mask_hf", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [(2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8), _additive_mask(2, 5, f32)], f32),
    ("float_mask_fp16", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [(2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8), _additive_mask(2, 5, f16)], f16),
    ("float_mask_inf_rows", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), _inf_mask(3, 5)], f32),
    ("gqa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
     [(2, 6, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8)], f32),
    ("gqa_causal_fp16", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
     [(1, 4, 5, 8), (1, 1, 5, 8), (1, 1, 5, 8)], f16),
    ("key_heads_broadcast", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
     [(2, 3, 4, 8), (2, 1, 5, 8), (2, 1, 5, 8)], f32),
]


@pytest.mark.parametrize("name,function,inputs,dtype", CASES, ids=[c[0] for c in CASES])
def test_attention(name, function, inputs, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in inputs], SDPA, device)


def test_attention_dynamic_batch_and_mask(device):
    specs, inputs = dynamic_inputs([((1, 2, 3, 4), (2, 2, 3, 4), (4, 2, 3, 4), (3, 2, 3, 4))] * 3, f32)
    mask_spec, mask = dynamic_inputs([((1, 1, 1, 3), (2, 1, 1, 3), (4, 1, 1, 3), (3, 1, 1, 3))], b8)
    check_converter(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), inputs + mask, SDPA,
                    device, specs=specs + mask_spec)


class _DropoutAttention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)


def test_attention_with_dropout_stays_in_pytorch():
    """Only inference attention converts: dropout_p != 0 is refused by the converter's supports predicate."""
    with pytest.raises(torch_trt.errors.TorchTRTError, match="scaled_dot_product_attention.*does not support these arguments"):
        torch_trt.compile(torch.jit.script(_DropoutAttention()), inputs=[torch.randn(1, 1, 2, 4)] * 3,
                          target="reference", require_full_compilation=True, min_block_size=1)
