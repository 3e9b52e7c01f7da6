"""The reference builder's row reordering: a shuffle of a GEMM's output rows done on its input rows instead.

A GEMM with constant weights (bias.py) works row by row, so a shuffle that only moves and regroups the rows of its
product, keeping the last dim whole, gives what the same shuffle of the input rows, then the GEMM, gives.
nn.MultiheadAttention with batch_first=True merges its heads into rows in (T, B) order, multiplies them by its output
projection and transposes the product to (B, T, E): the merge copies the heads anyway, and the transpose left the
product for the residual sum to read out of order (at batch 32 on an H100, ViT-B/16's LayerNorm after attention took
22.7 µs, against 12.9 µs for the one reading its rows in order). Done on the input, the transpose joins the merge:
one copy writes the rows in (B, T) order, and the product comes out in the order its readers read it.

Only where the GEMM's input is itself shuffled (a chain the GEMM alone reads), so no copy is added. Whether the
shuffle after keeps the last dim whole depends on the shapes, so the step works it out each time it is traced and
otherwise runs the shuffles and the GEMM one after another.
"""

from .bias import FusedBias
from .dataflow import producers_and_readers
from .shuffles import Factors, ShuffleChain, is_static_shuffle


def shuffle_rows_first(steps, output_names):
    """`steps` ((layer, record, weights) in order) with each shuffle, GEMM, shuffle sequence, whose intermediates
    nothing else reads, replaced by one step that shuffles the GEMM's input rows instead of its output's."""
    producers, readers = producers_and_readers(steps, output_names)
    reader_of = {name: step for step in steps for name in step[1]["inputs"]}
    replacing, merged = {}, set()  # id(last shuffle) -> the new step; ids of the steps it replaces
    for step in steps:
        if not isinstance(step[0], FusedBias):
            continue
        rows, product = step[1]["inputs"][0], step[1]["outputs"][0]
        before, after = producers.get(rows), reader_of.get(product)
        if before is None or after is None or readers[rows] != 1 or readers[product] != 1 or \
                _shuffles(before) is None or _shuffles(after) is None:
            continue
        record = {"inputs": [before[1]["inputs"][0], *step[1]["inputs"][1:]], "outputs": after[1]["outputs"]}
        replacing[id(after)] = (_RowsShuffledFirst(_shuffles(before), step[0], _shuffles(after)), record, {})
        merged |= {id(before), id(step)}
    return [replacing.get(id(step), step) for step in steps if id(step) not in merged]


def _shuffles(step):
    """The shuffle layers a static shuffle or a collapsed chain runs, else None."""
    layer = step[0]
    if isinstance(layer, ShuffleChain):
        return layer.layers
    return [layer] if is_static_shuffle(step) else None


class _RowsShuffledFirst:
    """The kernel of a shuffle, GEMM, shuffle sequence: both shuffles as one on the input rows, then the GEMM."""

    type = None  # no layer type: other fusions match no pattern on it

    def __init__(self, before, product, after):
        self.before, self.product, self.after = ShuffleChain(before), product, ShuffleChain(after)
        self.views = {}  # input shape -> (split shape, permutation, merged shape), or None: one after another

    def _compute(self, inputs, weights):
        x, matrix, row = inputs
        shape = tuple(x.shape)
        if shape not in self.views:
            self.views[shape] = self._view(shape, *matrix.shape)
        view = self.views[shape]
        if view is None:
            rows = self.before._compute([x], {})
            return self.after._compute([self.product._compute([rows, matrix, row], {})], {})
        split, order, merged = view
        return self.product._compute([x.reshape(split).permute(order).reshape(merged), matrix, row], {})

    def _view(self, shape, width, product_width):
        """Both shuffles as one view of an input of `shape`, or None where the shuffle after the GEMM does more than
        move and regroup rows, or a reshape needs a factor that does not divide."""
        factors = Factors.of_chain(shape, self.before.layers)
        if factors is None:
            return None
        product = Factors.of_chain((*factors.shape()[:-1], product_width), self.after.layers)
        if product is None:
            return None
        split, order, merged = product.view()
        if split[-1] != product_width or order[-1] != len(split) - 1 or merged[-1] != product_width:
            return None
        if not factors.reshape([*split[:-1], width]):
            return None
        factors.permute(order)
        return factors.view() if factors.reshape([*merged[:-1], width]) else None
