"""Attention converter: aten::scaled_dot_product_attention as matrix multiply, mask, softmax, matrix multiply.

It follows PyTorch's math implementation: everything runs in the inputs' dtype, scores are
softmax(q @ k^T * scale + mask) and a row whose scores are all -inf (a fully masked query) gives
zeros, as eager's safe softmax does, rather than NaN. TensorRT recognizes the pattern and fuses it.
A bool mask keeps scores where it is True; a float mask is added. Grouped-query attention
(enable_gqa) repeats each key/value head for its group of query heads.
"""

import math

import torch

from ..conversion.registry import converter
from ..conversion.shape_tensors import dim_size
from ..targets.dtypes import FLOAT_DTYPES
from ._helpers import (broadcast_pair, cast, dtype_of, elementwise, rank, reshape_torch_sizes, triangle_mask,
                       unsqueeze_to_rank)


def _without_dropout(node, settings):
    """Inference attention only: dropout_p must be the constant 0."""
    return node.namedInput("dropout_p").toIValue() == 0


def _static(size, what):
    if size == -1:
        raise NotImplementedError(f"{what} must be static, it is dynamic")
    return size


def _repeat_heads(ctx, tensor, groups):
    """[..., H, S, E] -> [..., H * groups, S, E], each head repeated `groups` times in a row (repeat_interleave)."""
    shape = list(tensor.shape)
    heads = _static(shape[-3], "the key/value head count of grouped-query attention")
    split = reshape_torch_sizes(ctx, tensor, shape[:-2] + [1] + shape[-2:], copied=len(shape) - 2)
    layer = ctx.net.add_slice(split, (0,), (groups,), (0,))  # stride 0 reads the one copy `groups` times
    layer.axes = (len(shape) - 2,)
    merged = shape[:-3] + [heads * groups] + shape[-2:]
    return reshape_torch_sizes(ctx, layer.get_output(0), merged, copied=len(shape) - 3)


def _causal_mask(ctx, scores):
    """The bool [L, S] mask of is_causal: query i sees keys 0..i (top-left aligned, as PyTorch's tril); built in the
    engine from the run-time lengths when they are dynamic."""
    last = rank(scores) - 1
    return triangle_mask(ctx, dim_size(ctx, scores, last - 1), dim_size(ctx, scores, last), 0, True, 2)


def _masked(ctx, scores, mask):
    """Scores with a bool mask applied (False -> -inf) or a float mask added."""
    dtype = dtype_of(ctx, scores)
    if dtype_of(ctx, mask) == torch.bool:
        mask = unsqueeze_to_rank(ctx, mask, rank(scores))
        scores = unsqueeze_to_rank(ctx, scores, rank(mask))
        minus_inf = ctx.constant(torch.full((1,) * rank(scores), -math.inf, dtype=dtype))
        return ctx.net.add_select(mask, scores, minus_inf).get_output(0)
    return elementwise(ctx, scores, cast(ctx, mask, dtype), ctx.trt.ElementWiseOperation.SUM, dtype)


def _safe_softmax(ctx, scores):
    """Softmax over the last dim, with zeros for rows that are all -inf (eager's _safe_softmax)."""
    last = 1 << (rank(scores) - 1)
    layer = ctx.net.add_softmax(scores)
    layer.axes = last
    probabilities = layer.get_output(0)
    peak = ctx.net.add_reduce(scores, ctx.trt.ReduceOperation.MAX, last, True).get_output(0)
    masked_row = elementwise(ctx, peak, -math.inf, ctx.trt.ElementWiseOperation.EQUAL, dtype_of(ctx, scores))
    zero = ctx.constant(torch.zeros((1,) * rank(scores), dtype=dtype_of(ctx, scores)))
    return ctx.net.add_select(masked_row, zero, probabilities).get_output(0)


@converter("aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
           "float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
           supports=_without_dropout)
def scaled_dot_product_attention(ctx, node, args):
    """softmax(query @ key^T * scale + mask) @ value, in the query's dtype."""
    query, key, value = (args[name].itensor() for name in ("query", "key", "value"))
    dtype = dtype_of(ctx, query)
    if dtype not in FLOAT_DTYPES or {dtype_of(ctx, key), dtype_of(ctx, value)} != {dtype}:
        raise ValueError(f"attention needs query, key and value of one float dtype, got {dtype}, "
                         f"{dtype_of(ctx, key)} and {dtype_of(ctx, value)}")
    if args["is_causal"].to_bool() and not args["attn_mask"].is_none():
        raise ValueError("attention takes either attn_mask or is_causal=True, not both")
    if args["enable_gqa"].to_bool():
        groups = _static(query.shape[-3], "the query head count of grouped-query attention") // \
            _static(key.shape[-3], "the key head count of grouped-query attention")
        key, value = _repeat_heads(ctx, key, groups), _repeat_heads(ctx, value, groups)
    scale = args["scale"].optional(lambda arg: arg.to_float())
    scale = 1 / math.sqrt(_static(query.shape[-1], "the head size")) if scale is None else scale
    # Scaling the query, not the scores, keeps float16 products in range (PyTorch's math path does the same).
    query = elementwise(ctx, query, scale, ctx.trt.ElementWiseOperation.PROD, dtype)
    operation = ctx.trt.MatrixOperation
    query, key = broadcast_pair(ctx, query, key)
    scores = ctx.net.add_matrix_multiply(query, operation.NONE, key, operation.TRANSPOSE).get_output(0)
    if args["is_causal"].to_bool():
        scores = _masked(ctx, scores, _causal_mask(ctx, scores))
    if not args["attn_mask"].is_none():
        scores = _safe_softmax(ctx, _masked(ctx, scores, args["attn_mask"].itensor()))
    else:
        layer = ctx.net.add_softmax(scores)
        layer.axes = 1 << (rank(scores) - 1)
        scores = layer.get_output(0)
    scores, value = broadcast_pair(ctx, scores, value)
    return ctx.set_output(node, ctx.net.add_matrix_multiply(scores, operation.NONE, value, operation.NONE))
