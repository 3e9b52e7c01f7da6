"""Lower the fused eval-mode kernels of nn.MultiheadAttention and nn.TransformerEncoderLayer into the ops they compute.

Under no_grad in eval mode both modules call one fused kernel (their "fast path"); its result is
reproduced here with linear, reshape, transpose, matmul, softmax, layer_norm and relu/gelu. The
replacements are TorchScript functions: branches on arguments that are constants in the graph
(no mask, need_weights=False) fold away in constant propagation.
"""

import functools
import math
import warnings
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ..rewrite import matching_nodes, replace_node


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, embed_dim: int, num_heads: int,
               qkv_weight: torch.Tensor, qkv_bias: torch.Tensor, proj_weight: torch.Tensor, proj_bias: torch.Tensor,
               mask: Optional[torch.Tensor], mask_type: Optional[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    """(output, per-head weights) of batch-first multi-head attention; mask_type 1: a (batch, source) padding mask."""
    batch, target, source = query.size(0), query.size(1), key.size(1)
    head_dim = embed_dim // num_heads
    weights = qkv_weight.chunk(3)
    biases = qkv_bias.chunk(3)
    q = F.linear(query, weights[0], biases[0]).reshape(batch, target, num_heads, head_dim).transpose(1, 2)
    k = F.linear(key, weights[1], biases[1]).reshape(batch, source, num_heads, head_dim).transpose(1, 2)
    v = F.linear(value, weights[2], biases[2]).reshape(batch, source, num_heads, head_dim).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(head_dim))
    if mask is not None:
        if mask_type is not None and mask_type == 1:
            mask = mask.reshape(batch, 1, 1, source)
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(mask, float("-inf"))
        else:
            scores = scores + mask
    probabilities = torch.softmax(scores, -1)
    output = torch.matmul(probabilities, v).transpose(1, 2).reshape(batch, target, embed_dim)
    return F.linear(output, proj_weight, proj_bias), probabilities


def multi_head_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, embed_dim: int,
                         num_heads: int, qkv_weight: torch.Tensor, qkv_bias: torch.Tensor, proj_weight: torch.Tensor,
                         proj_bias: torch.Tensor, mask: Optional[torch.Tensor], need_weights: bool,
                         average_attn_weights: bool, mask_type: Optional[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    """aten::_native_multi_head_attention; without need_weights the second result is empty (the kernel's: undefined)."""
    output, probabilities = _attention(query, key, value, embed_dim, num_heads, qkv_weight, qkv_bias,
                                       proj_weight, proj_bias, mask, mask_type)
    if not need_weights:
        return output, torch.empty([0], dtype=output.dtype, device=output.device)
    return output, probabilities.mean(1) if average_attn_weights else probabilities


def transformer_encoder_layer(src: torch.Tensor, embed_dim: int, num_heads: int, qkv_weight: torch.Tensor,
                              qkv_bias: torch.Tensor, proj_weight: torch.Tensor, proj_bias: torch.Tensor,
                              use_gelu: bool, norm_first: bool, eps: float, norm_weight_1: torch.Tensor,
                              norm_bias_1: torch.Tensor, norm_weight_2: torch.Tensor, norm_bias_2: torch.Tensor,
                              ffn_weight_1: torch.Tensor, ffn_bias_1: torch.Tensor, ffn_weight_2: torch.Tensor,
                              ffn_bias_2: torch.Tensor, mask: Optional[torch.Tensor],
                              mask_type: Optional[int]) -> torch.Tensor:
    """aten::_transformer_encoder_layer_fwd: self-attention, then feed-forward, each with a residual and layer_norm."""
    shape = [embed_dim]
    x = F.layer_norm(src, shape, norm_weight_1, norm_bias_1, eps) if norm_first else src
    attended = _attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                          mask, mask_type)[0]
    x = src + attended if norm_first else F.layer_norm(src + attended, shape, norm_weight_1, norm_bias_1, eps)
    y = F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps) if norm_first else x
    hidden = F.linear(y, ffn_weight_1, ffn_bias_1)
    hidden = F.gelu(hidden) if use_gelu else F.relu(hidden)
    x = x + F.linear(hidden, ffn_weight_2, ffn_bias_2)
    return x if norm_first else F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps)


@functools.lru_cache(maxsize=None)
def _graph(function):
    """The inlined TorchScript graph of `function`, scripted once, a tuple result returned as separate outputs."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        graph = torch.jit.script(function).graph.copy()
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_lower_all_tuples(graph)
    return graph


_FUSED = (("aten::_native_multi_head_attention", multi_head_attention),
          ("aten::_transformer_encoder_layer_fwd", transformer_encoder_layer))


def lower_fused_attention(graph):
    """Replace the fused multi-head attention and transformer encoder layer kernels by the ops they compute."""
    for op, function in _FUSED:
        for node in matching_nodes(graph, op):
            replace_node(graph, node, _graph(function))
    torch._C._jit_pass_constant_propagation(graph)
