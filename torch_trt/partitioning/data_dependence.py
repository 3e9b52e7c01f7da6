"""Which values of a graph follow its input tensors' data, whatever the example runs of shape analysis showed.

Shape analysis takes a value that is the same in every run for one the inputs' shapes fix. Values that follow the
data may come out the same in every run all the same: the count of a mask's NaNs (`x[~isnan(x)].size(0)`) on NaN-free
random examples, `unique`'s length, the rows of a branch on `x.sum() > 300`. Made constants, they give silently
wrong results on other data. So the graph is walked once, and these follow the data:

- a plain value (int, float, bool, list) read out of a tensor whose data follows the inputs' (`aten::Int`,
  `.item()`, `.tolist()`, ...), or computed from a value or a tensor's metadata that follows the data;
- a tensor whose shape the data decides: the result of an op whose shape follows its input's data (nonzero,
  masked_select, unique, boolean-mask indexing, ...), and what is computed from it (unless 0-dim): no engine profile
  describes it (`shaped_by_data`);
- a tensor whose shape the data may decide: the result of a branch or loop the data decides, or of an op reading a
  value that follows the data (`torch.zeros(n)`): an engine may take it, and checks its shape when it runs, but its
  sizes follow the data (`shape_may_follow_data`).

A tensor's data follows the inputs' when it is a graph input or computed from such a tensor or from a value that
follows the data; sizes, dtypes and other metadata of a tensor are not its data (`x.size(1) // 2` reads no data).
"""

from dataclasses import dataclass, field

import torch

from .support import DATA_READERS, is_tensor

# Ops whose result's shape follows the values of a tensor they read (aten::index with a boolean mask, and
# repeat_interleave with repeats in a tensor: `_shaped_by_data`).
DATA_SHAPED_OPS = frozenset({
    "aten::nonzero", "aten::nonzero_numpy", "aten::argwhere", "aten::masked_select", "aten::unique",
    "aten::_unique", "aten::_unique2", "aten::unique_dim", "aten::unique_consecutive", "aten::unique_dim_consecutive",
    "aten::bincount",
})
_MASK_DTYPES = (torch.bool, torch.uint8)


@dataclass
class DataDependence:
    """The `unique()` ids of the values that follow the data, by kind (module docstring)."""

    values: set = field(default_factory=set)  # plain values
    shaped_by_data: set = field(default_factory=set)  # tensors
    shape_may_follow_data: set = field(default_factory=set)  # tensors


def data_dependence(graph, info):
    """What in `graph` (top-level and nested) follows its input tensors' data. `info(value)` is what shape analysis
    saw of a tensor (a TensorInfo, or None): one it saw 0-dim in every run has a shape nothing decides, and its dtype
    tells a boolean mask."""
    data = {value.unique() for value in graph.inputs() if is_tensor(value)}
    found = DataDependence()
    _walk(graph.block(), data, found, info)
    return found


def _walk(block, data, found, info):
    for node in block.nodes():
        for inner in node.blocks():
            _walk(inner, data, found, info)
        read = [value.unique() for value in list(node.inputs()) + [v for b in node.blocks() for v in b.outputs()]]
        reads_data = any(value in data for value in read)
        reads_value = any(value in found.values for value in read)
        reads_shaped = any(value in found.shaped_by_data for value in read)
        reads_uncertain = any(value in found.shape_may_follow_data for value in read)
        for value in node.outputs():
            if not is_tensor(value):
                if reads_value or reads_shaped or reads_uncertain or reads_data and node.kind() in DATA_READERS:
                    found.values.add(value.unique())
                continue
            if reads_data or reads_value:
                data.add(value.unique())
            if getattr(info(value), "max_shape", None) == ():
                continue
            if reads_shaped or reads_data and _shaped_by_data(node, data, info):
                found.shaped_by_data.add(value.unique())
            elif reads_value or reads_uncertain:
                found.shape_may_follow_data.add(value.unique())


def _shaped_by_data(node, data, info):
    """Whether the node's result has a shape that the values of a tensor it reads decide (a mask or repeats that
    follow the data: a constant mask selects as many elements on every call)."""
    kind = node.kind()
    if kind == "aten::index":
        indices = node.inputsAt(1).node()
        if indices.kind() == "prim::Constant":
            return False
        if indices.kind() != "prim::ListConstruct":
            return True
        return any(index.unique() in data and getattr(info(index), "dtype", torch.bool) in _MASK_DTYPES
                   for index in indices.inputs())
    if kind == "aten::repeat_interleave":  # repeats in a tensor that follows the data, not an int
        repeats = node.namedInput("repeats")
        return is_tensor(repeats) and repeats.unique() in data
    return kind in DATA_SHAPED_OPS
