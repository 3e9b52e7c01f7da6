"""The reference builder's attention fusion: matrix multiply, scale, softmax, matrix multiply as one kernel.

TensorRT's builder recognizes multi-head attention in a network and runs it as one fused kernel; the
reference does the same for the unmasked form converters build (scaled_dot_product_attention, and
nn.MultiheadAttention once lowered):

    scores = Q @ K^T (matrix multiply with op1 TRANSPOSE, or a shuffle swapping K's last two dims)
    scores = scores * c  (or scores / c, or Q * c before the product; c a constant scalar)
    output = softmax(scores, last dim) @ V

becomes one `scaled_dot_product_attention(Q, K, V, scale)` step, which picks a flash or memory-efficient
kernel. Whether the step fits is only known from the shapes, so the fused step checks them each time it
is traced and runs the original layers when they do not fit (ranks or batch dims differ, softmax over
another dim): a fusion that changed what the layers compute would be a wrong engine, not a fast one.
"""

import dataclasses

import torch
import torch.nn.functional as F

from .dataflow import producers_and_readers
from .enums import ElementWiseOperation, LayerType, MatrixOperation


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
            record = {"inputs": [chain.query, chain.key, chain.value], "outputs": step[1]["outputs"]}
            result.append((_FusedAttention(chain, folded), record, {}))
    return result


@dataclasses.dataclass
class _Chain:
    """One matched attention: the names of Q, K and V, the scale, and the steps it replaces (sorted to plan order)."""

    query: str
    key: str
    value: str
    scale: float
    softmax_axes: int
    key_transpose: object  # the shuffle layer that transposed K, or None when the product did (op1 TRANSPOSE)
    steps: list


def _match(step, producers, readers, folded):
    """The attention chain ending at this step (the product with V), or None."""
    layer, record, _ = step
    if not _is_product(layer, MatrixOperation.NONE):
        return None
    probabilities, value = record["inputs"]
    softmax = _single_use_producer(probabilities, producers, readers, LayerType.SOFTMAX)
    if softmax is None:
        return None
    scores, scale = softmax[1]["inputs"][0], 1.0
    scaling = _single_use_producer(scores, producers, readers, LayerType.ELEMENTWISE)
    if scaling is not None:
        scores, scale = _scaled(scaling, folded, scale)
        if scores is None:
            return None
    product = _single_use_producer(scores, producers, readers, LayerType.MATRIX_MULTIPLY)
    if product is None or product[0].op0 != MatrixOperation.NONE:
        return None
    query, key = product[1]["inputs"]
    chain_steps, key_transpose = [product, softmax, step] + ([scaling] if scaling else []), None
    if product[0].op1 == MatrixOperation.NONE:
        transpose = _single_use_producer(key, producers, readers, LayerType.SHUFFLE)
        if transpose is None or len(transpose[1]["inputs"]) != 1 or transpose[0].reshape_dims is not None:
            return None
        key, key_transpose = transpose[1]["inputs"][0], transpose[0]
        chain_steps.append(transpose)
    elif product[0].op1 != MatrixOperation.TRANSPOSE:
        return None
    query_scaling = _single_use_producer(query, producers, readers, LayerType.ELEMENTWISE)
    if query_scaling is not None:
        scaled_query, scale = _scaled(query_scaling, folded, scale)
        if scaled_query is not None:
            query = scaled_query
            chain_steps.append(query_scaling)
    return _Chain(query, key, value, scale, softmax[0].axes, key_transpose, chain_steps)


def _is_product(layer, op1):
    return layer.type == LayerType.MATRIX_MULTIPLY and layer.op0 == MatrixOperation.NONE and layer.op1 == op1


def _single_use_producer(name, producers, readers, layer_type):
    """The step producing `name` when it is a `layer_type` layer and only one step reads `name`."""
    step = producers.get(name)
    if step is None or step[0].type != layer_type or readers.get(name) != 1:
        return None
    return step


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

    def _compute(self, inputs, weights):
        query, key, value = inputs
        if self._fits(query, key, value):
            return F.scaled_dot_product_attention(query, key, value, scale=self.chain.scale)
        return self._layer_by_layer(query, key, value)

    def _fits(self, query, key, value):
        rank = query.dim()
        same_dtype = query.dtype == key.dtype == value.dtype and query.is_floating_point()
        same_batch = rank >= 3 and key.dim() == value.dim() == rank and query.shape[:-2] == key.shape[:-2] == \
            value.shape[:-2]
        if not (same_dtype and same_batch and self.chain.softmax_axes == 1 << (rank - 1)):
            return False
        transpose = self.chain.key_transpose
        swapped = list(range(rank - 2)) + [rank - 1, rank - 2]
        return transpose is None or (list(transpose.first_transpose[:rank]) == swapped and
                                     list(transpose.second_transpose[:rank]) == list(range(rank)))

    def _layer_by_layer(self, query, key, value):
        values = {**self.constants, self.chain.query: query, self.chain.key: key, self.chain.value: value}
        for layer, record, weights in self.chain.steps:
            outputs = layer._compute([values[n] for n in record["inputs"]], weights)
            values.update(zip(record["outputs"], outputs if isinstance(outputs, (tuple, list)) else (outputs,)))
        return values[self.chain.steps[-1][1]["outputs"][0]]
