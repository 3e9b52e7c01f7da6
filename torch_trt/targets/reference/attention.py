"""The reference builder's attention fusion: matrix multiply, scale, mask, softmax, matrix multiply as one kernel.

TensorRT's builder recognizes multi-head attention in a network and runs it as one fused kernel; the
reference does the same for the forms converters build (scaled_dot_product_attention, nn.MultiheadAttention
once lowered, attention written by hand as in HuggingFace's eager attention):

    scores = Q @ K^T (matrix multiply with op1 TRANSPOSE, or a shuffle swapping K's last two dims)
    scores = scores * c  (or scores / c, or Q * c before the product; c a constant scalar)
    scores = scores + M  (a float mask), or select(M, scores, -inf) (a bool mask), or neither
    output = softmax(scores, last dim) @ V, the softmax either plain or safe:
             select(reduce_max(scores) == -inf, 0, softmax(scores)), zeros for a fully masked row

becomes one `scaled_dot_product_attention(Q, K, V, M, scale)` step, which picks a flash, memory-efficient or
cuDNN kernel. Whether the step fits is only known from the shapes, so the fused step checks them each time it
is traced and runs the original layers when they do not fit (ranks or batch dims differ, softmax over
another dim, a mask that does not broadcast): a fusion that changed what the layers compute would be a wrong
engine, not a fast one. For the same reason a fully masked row gives what the layers give (zeros after a safe
softmax, NaN after a plain one) whichever kernel runs. One difference is left: the kernels add a float mask in
float32, so in half precision a row that a finite mask hides whole (transformers' finfo.min padding) reads as
PyTorch's scaled_dot_product_attention gives it, where the layers round scores plus mask to half first.
"""

import dataclasses
import math

import torch
import torch.nn.functional as F

from .dataflow import producers_and_readers
from .enums import ElementWiseOperation, LayerType, MatrixOperation, ReduceOperation


def fuse_attention(steps, folded, output_names):
    """`steps` ((layer, record, weights) in order) with each attention chain replaced by one fused step."""
    producers, readers = producers_and_readers(steps, output_names)
    position = {id(step): index for index, step in enumerate(steps)}
    chains = [chain for chain in (_match(step, producers, readers, folded) for step in steps) if chain]
    for chain in chains:
        chain.steps.sort(key=lambda step: position[id(step)])
    fused = {id(step): chain for chain in chains for step in chain.steps}
    result = []
    for step in steps:
        chain = fused.get(id(step))
        if chain is None:
            result.append(step)
        elif step is chain.steps[-1]:
            inputs = [chain.query, chain.key, chain.value] + ([chain.mask] if chain.mask else [])
            result.append((_FusedAttention(chain, folded), {"inputs": inputs, "outputs": step[1]["outputs"]}, {}))
    return result


@dataclasses.dataclass
class _Chain:
    """One matched attention: the names of Q, K, V and the mask, the scale, and the steps it replaces (sorted to
    plan order)."""

    query: str
    key: str
    value: str
    mask: str | None
    scale: float
    softmax_axes: int
    key_transpose: object  # the shuffle layer that transposed K, or None when the product did (op1 TRANSPOSE)
    fully_masked: float  # a row whose scores are all -inf: 0 after a safe softmax, NaN after a plain one
    steps: list


def _match(step, producers, readers, folded):
    """The attention chain ending at this step (the product with V), or None."""
    layer, record, _ = step
    if not _is_product(layer, MatrixOperation.NONE):
        return None
    probabilities, value = record["inputs"]
    softmax, guard = _softmax(probabilities, producers, readers, folded)
    if softmax is None:
        return None
    scores, score_readers = softmax[1]["inputs"][0], 2 if guard else 1
    for scores, mask, masking in _masks(scores, score_readers, producers, readers, folded):
        product = _product(scores, 1 if masking else score_readers, producers, readers, folded)
        if product is not None:
            query, key, key_transpose, scale, product_steps = product
            steps = [step, softmax, *guard, *([masking] if masking else []), *product_steps]
            return _Chain(query, key, value, mask, scale, softmax[0].axes, key_transpose,
                          0.0 if guard else math.nan, steps)
    return None


def _softmax(probabilities, producers, readers, folded):
    """(the softmax step, the safe softmax's other steps or []) producing `probabilities`, or (None, [])."""
    softmax = _single_use_producer(probabilities, producers, readers, LayerType.SOFTMAX)
    if softmax is not None:
        return softmax, []
    select = _single_use_producer(probabilities, producers, readers, LayerType.SELECT)
    if select is None:
        return None, []
    masked_row, zero, probabilities = select[1]["inputs"]
    softmax = _single_use_producer(probabilities, producers, readers, LayerType.SOFTMAX)
    equal = _single_use_producer(masked_row, producers, readers, LayerType.ELEMENTWISE)
    if softmax is None or equal is None or equal[0].op != ElementWiseOperation.EQUAL or \
            not _is_scalar(folded, zero, 0.0):
        return None, []
    peak, minus_inf = equal[1]["inputs"]
    reduce = _single_use_producer(peak, producers, readers, LayerType.REDUCE)
    if reduce is None or not _is_scalar(folded, minus_inf, -math.inf) or reduce[0].op != ReduceOperation.MAX or \
            reduce[0].axes != softmax[0].axes or not reduce[0].keep_dims or \
            reduce[1]["inputs"][0] != softmax[1]["inputs"][0]:
        return None, []
    return softmax, [select, equal, reduce]


def _masks(scores, uses, producers, readers, folded):
    """The (unmasked scores, mask name, masking step) readings of the softmax's input `scores`, which `uses` steps
    read: through a float mask added, a bool mask selecting, and as unmasked scores (mask and step None)."""
    sum_step = _single_use_producer(scores, producers, readers, LayerType.ELEMENTWISE, uses)
    if sum_step is not None and sum_step[0].op == ElementWiseOperation.SUM:
        first, second = sum_step[1]["inputs"]
        yield first, second, sum_step
        yield second, first, sum_step
    select = _single_use_producer(scores, producers, readers, LayerType.SELECT, uses)
    if select is not None and _is_scalar(folded, select[1]["inputs"][2], -math.inf):
        yield select[1]["inputs"][1], select[1]["inputs"][0], select
    yield scores, None, None


def _product(scores, uses, producers, readers, folded):
    """(Q, K, K's transposing shuffle or None, scale, steps) of scores = (Q * c) @ K^T * c', or None."""
    scale = 1.0
    scaling = _single_use_producer(scores, producers, readers, LayerType.ELEMENTWISE, uses)
    if scaling is not None:
        scores, scale = _scaled(scaling, folded, scale)
        if scores is None:
            return None
        uses = 1
    product = _single_use_producer(scores, producers, readers, LayerType.MATRIX_MULTIPLY, uses)
    if product is None or product[0].op0 != MatrixOperation.NONE:
        return None
    query, key = product[1]["inputs"]
    steps, key_transpose = [product] + ([scaling] if scaling else []), None
    if product[0].op1 == MatrixOperation.NONE:
        transpose = _single_use_producer(key, producers, readers, LayerType.SHUFFLE)
        if transpose is None or len(transpose[1]["inputs"]) != 1 or transpose[0].reshape_dims is not None:
            return None
        key, key_transpose = transpose[1]["inputs"][0], transpose[0]
        steps.append(transpose)
    elif product[0].op1 != MatrixOperation.TRANSPOSE:
        return None
    query_scaling = _single_use_producer(query, producers, readers, LayerType.ELEMENTWISE)
    if query_scaling is not None:
        scaled_query, scale = _scaled(query_scaling, folded, scale)
        if scaled_query is not None:
            query = scaled_query
            steps.append(query_scaling)
    return query, key, key_transpose, scale, steps


def _is_product(layer, op1):
    return layer.type == LayerType.MATRIX_MULTIPLY and layer.op0 == MatrixOperation.NONE and layer.op1 == op1


def _single_use_producer(name, producers, readers, layer_type, uses=1):
    """The step producing `name` when it is a `layer_type` layer and `uses` steps (of the chain) read `name`."""
    step = producers.get(name)
    if step is None or step[0].type != layer_type or readers.get(name) != uses:
        return None
    return step


def _is_scalar(folded, name, value):
    """Whether `name` is a folded one-element constant equal to `value`."""
    return name in folded and folded[name].numel() == 1 and float(folded[name]) == value


def _scaled(step, folded, scale):
    """(the scaled tensor's name, scale times the factor) for `x * c`, `c * x` or `x / c` with c a folded one-element
    constant (not 0, for a division), else (None, scale)."""
    layer, record, _ = step
    first, second = record["inputs"]
    for tensor, constant in ((first, second), (second, first)):
        if constant not in folded or folded[constant].numel() != 1 or tensor in folded:
            continue
        factor = float(folded[constant])
        if layer.op == ElementWiseOperation.PROD:
            return tensor, scale * factor
        if layer.op == ElementWiseOperation.DIV and constant == second and factor:  # x / c, never c / x
            return tensor, scale / factor
    return None, scale


class _FusedAttention:
    """The kernel of a fused attention step: scaled_dot_product_attention where the shapes fit, the original layers
    where they do not."""

    type = None  # no layer type: other fusions match no pattern on it

    def __init__(self, chain, folded):
        self.chain = chain
        self.constants = {n: folded[n] for s in chain.steps for n in s[1]["inputs"] if n in folded}
        # A constant mask (causal, or padding of all-ones inputs) seldom hides a whole row: then no row needs fixing.
        constant_mask = folded.get(chain.mask) if chain.mask else None
        self.rows_need_fixing = chain.mask is not None and (
            constant_mask is None or bool(_fully_masked_rows(constant_mask).any()))
        # One that hides nothing (transformers' all-True mask of a model compiled without one) is left out, and a
        # causal one becomes is_causal: GPU kernels that read a mask are slower, and none reads one broadcast along
        # its last dim.
        self.hides_nothing = constant_mask is not None and _hides_nothing(constant_mask)
        self.causal = constant_mask is not None and not self.hides_nothing and _is_causal(constant_mask)

    def _compute(self, inputs, weights):
        query, key, value, *mask = inputs
        mask = mask[0] if mask else None
        if not self._fits(query, key, value, mask):
            return self._layer_by_layer(inputs)
        causal = self.causal and mask.shape[-2:] == (query.shape[-2], key.shape[-2])
        given = None if self.hides_nothing or causal else mask
        output = F.scaled_dot_product_attention(query, key, value, attn_mask=given, is_causal=causal,
                                                scale=self.chain.scale)
        if not self.rows_need_fixing:
            return output
        return torch.where(_fully_masked_rows(mask), self.chain.fully_masked, output)

    def _fits(self, query, key, value, mask):
        rank = query.dim()
        same_dtype = query.dtype == key.dtype == value.dtype and query.is_floating_point()
        same_batch = rank >= 3 and key.dim() == value.dim() == rank and query.shape[:-2] == key.shape[:-2] == \
            value.shape[:-2]
        if not (same_dtype and same_batch and self.chain.softmax_axes == 1 << (rank - 1)):
            return False
        if mask is not None:
            scores_shape = (*query.shape[:-1], key.shape[-2])
            if mask.dtype not in (torch.bool, query.dtype) or mask.dim() != rank or \
                    any(size not in (1, full) for size, full in zip(mask.shape, scores_shape)):
                return False
        transpose = self.chain.key_transpose
        swapped = list(range(rank - 2)) + [rank - 1, rank - 2]
        return transpose is None or (list(transpose.first_transpose[:rank]) == swapped and
                                     list(transpose.second_transpose[:rank]) == list(range(rank)))

    def _layer_by_layer(self, inputs):
        chain = self.chain
        values = {**self.constants, **dict(zip((chain.query, chain.key, chain.value, chain.mask), inputs))}
        for layer, record, weights in chain.steps:
            outputs = layer._compute([values[n] for n in record["inputs"]], weights)
            values.update(zip(record["outputs"], outputs if isinstance(outputs, (tuple, list)) else (outputs,)))
        return values[chain.steps[-1][1]["outputs"][0]]


def _unchanged(mask):
    """Where a mask keeps the score as it is: True, or 0 added."""
    return mask if mask.dtype == torch.bool else mask == 0


def _hides_nothing(mask):
    return bool(_unchanged(mask).all())


def _is_causal(mask):
    """Whether a mask keeps exactly the keys up to each query's position, top-left aligned as is_causal's: True (or
    0 added) on and below the diagonal, False (or -inf added) above it, in every slice of its leading dims."""
    kept = _unchanged(mask)
    if mask.dtype != torch.bool and not bool((kept | (mask == -math.inf)).all()):
        return False
    causal = torch.ones(mask.shape[-2:], dtype=torch.bool, device=mask.device).tril()
    return bool((kept == causal).all())


def _fully_masked_rows(mask):
    """Where a query sees no key (its mask row is all False, or all -inf), as a [..., L or 1, 1] bool tensor."""
    kept = mask if mask.dtype == torch.bool else mask != -math.inf
    return ~kept.any(-1, keepdim=True)
