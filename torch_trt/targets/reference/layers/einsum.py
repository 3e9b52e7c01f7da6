"""IEinsumLayer: Einstein summation over one or two float tensors, with TensorRT's equation rules.

TensorRT's equation (operators doc "Einsum", NvInfer.h IEinsumLayer): a comma-separated term of
ASCII lowercase labels per input, optionally `->` and the output term; spaces may separate the
elements. No ellipsis, no label repeated within one term (a diagonal), at most two inputs of one
dtype among FLOAT, HALF and BF16; labels shared by inputs must have equal sizes (the operators doc
says "must match": no size-1 broadcasting); each output label appears in some input and at most
once in the output. Without `->` the output is the labels used once, in alphabetical order.
"""

import string
from collections import Counter

import torch

from ...dtypes import FLOAT_DTYPES
from ..enums import LayerType
from ..network import ILayer, check, network_method

_MAX_INPUTS = 2


def parse_equation(equation):
    """(input terms, output term) of a TensorRT einsum equation; NetworkError for what TensorRT refuses."""
    text = equation.replace(" ", "")
    check("." not in text, f"einsum equation {equation!r}: TensorRT does not support ellipsis ('...')")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    labels = set(lhs + rhs) - {","}
    check(labels <= set(string.ascii_lowercase),
          f"einsum equation {equation!r}: labels must be ASCII lowercase letters, with one optional '->'")
    for term in terms:
        check(len(set(term)) == len(term), f"einsum equation {equation!r}: term {term!r} repeats a label; "
              "TensorRT does not support diagonal operations")
    counts = Counter("".join(terms))
    output = rhs if arrow else "".join(sorted(label for label, count in counts.items() if count == 1))
    check(len(set(output)) == len(output) and set(output) <= set(counts),
          f"einsum equation {equation!r}: each output label must appear in an input and only once in the output")
    return terms, output


def _label_sizes(terms, inputs, equation):
    """{label: size}; each input's rank must match its term, and a label has one size across inputs."""
    sizes = {}
    for term, tensor in zip(terms, inputs):
        check(len(term) == tensor.dim(), f"einsum equation {equation!r}: term {term!r} labels {len(term)} dims "
              f"but its input has shape {tuple(tensor.shape)}")
        for label, size in zip(term, tensor.shape):
            check(sizes.setdefault(label, size) == size, f"einsum equation {equation!r}: label {label!r} has "
                  f"sizes {sizes[label]} and {size}; TensorRT needs equal sizes (no broadcasting)")
    return sizes


class IEinsumLayer(ILayer):
    _layer_type = LayerType.EINSUM
    _attributes = ("equation",)

    def _check(self, inputs):
        check(1 <= len(inputs) <= _MAX_INPUTS, f"einsum takes one or two inputs, got {len(inputs)}")
        dtypes = [t.dtype for t in inputs]
        check(len(set(dtypes)) == 1, f"einsum inputs must have the same dtype, got {dtypes}; insert a cast")
        check(dtypes[0] in FLOAT_DTYPES, f"einsum needs FLOAT, HALF or BF16 inputs, got {dtypes[0]}; insert a cast")
        terms, _ = parse_equation(self.equation)
        check(len(terms) == len(inputs), f"einsum equation {self.equation!r} has {len(terms)} input terms for "
              f"{len(inputs)} inputs")
        _label_sizes(terms, inputs, self.equation)

    def _compute(self, inputs, weights):
        return torch.einsum(self.equation.replace(" ", ""), *inputs)


@network_method
def add_einsum(self, inputs, equation):
    return self._add(IEinsumLayer, list(inputs), equation=str(equation))
