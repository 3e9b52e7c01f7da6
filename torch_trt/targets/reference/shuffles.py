"""The reference builder's shuffle collapsing: a chain of shuffles as one view wherever it is one.

TensorRT's builder merges consecutive shuffles into one. Converters build such chains around attention's heads:
nn.MultiheadAttention, lowered, splits its projection (T, B, 3E) into query, key and value, reshapes each
(T, B, E) to (T, B*H, D), transposes it and reshapes it to (B, H, T, D). Run one by one, the merge of B with H
is no view of a slice of the projection, so each of query, key and value is copied (a tenth of ViT-B/16's GPU
time at batch 32); run as a whole, the chain only splits dims, permutes them and merges some back, which is a
view: the input split into the chain's finest factors, permuted once, merged once.

Whether a chain is one view depends on the shapes, so the collapsed step works the factors out each time it is
traced and runs the shuffles one by one when a reshape would need a factor that does not divide (a (4, 3) tensor
read as (3, 4)).
"""

import math

from .dataflow import producers_and_readers
from .enums import LayerType
from .layers.shuffle import reshape_target


def collapse_shuffles(steps, output_names):
    """`steps` ((layer, record, weights) in order) with each chain of two or more static shuffles, whose
    intermediates nothing else reads, replaced by one step."""
    producers, readers = producers_and_readers(steps, output_names)
    chain_of = {}  # id(step) -> the chain (a list of steps) it ends, for every static shuffle
    for step in steps:
        if not is_static_shuffle(step):
            continue
        source = step[1]["inputs"][0]
        previous = producers.get(source)
        if previous is not None and id(previous) in chain_of and readers[source] == 1:
            chain_of[id(step)] = chain_of.pop(id(previous)) + [step]
        else:
            chain_of[id(step)] = [step]
    chains = {id(chain[-1]): chain for chain in chain_of.values() if len(chain) > 1}
    collapsed = {id(step) for chain in chains.values() for step in chain}
    result = []
    for step in steps:
        chain = chains.get(id(step))
        if chain is not None:
            record = {"inputs": chain[0][1]["inputs"], "outputs": step[1]["outputs"]}
            result.append((ShuffleChain([layer for layer, _, _ in chain]), record, {}))
        elif id(step) not in collapsed:
            result.append(step)
    return result


def is_static_shuffle(step):
    layer, record, _ = step
    return layer.type == LayerType.SHUFFLE and len(record["inputs"]) == 1


class ShuffleChain:
    """The kernel of collapsed shuffles: one split, permute and merge where the factors divide, else the shuffles."""

    type = None  # no layer type: other fusions match no pattern on it

    def __init__(self, layers):
        self.layers = layers
        self.views = {}  # input shape -> (split shape, permutation, output shape), or None: the shuffles one by one

    def _compute(self, inputs, weights):
        (tensor,) = inputs
        shape = tuple(tensor.shape)
        if shape not in self.views:  # a program run without code generation works the factors out once per shape
            factors = Factors.of_chain(shape, self.layers)
            self.views[shape] = None if factors is None else factors.view()
        view = self.views[shape]
        if view is None:
            for layer in self.layers:
                tensor = layer._compute([tensor], {})
            return tensor
        split, order, merged = view
        return tensor.reshape(split).permute(order).reshape(merged)


class Factors:
    """A tensor of the chain as factors of its input: the input's dims split into factors (`memory`, outermost
    first), and each of the tensor's dims as the factors it spans (`dims`, outermost first)."""

    def __init__(self, shape):
        self.sizes = list(shape)  # factor id -> size
        self.memory = list(range(len(shape)))
        self.dims = [[factor] for factor in self.memory]

    @classmethod
    def of_chain(cls, shape, layers):
        """The factors of the chain's output, or None when a reshape needs a factor that does not divide."""
        if 0 in shape:
            return None
        factors = cls(shape)
        for layer in layers:
            factors.permute(layer.first_transpose)
            if layer.reshape_dims is not None:
                target = reshape_target(factors.shape(), layer.reshape_dims, layer.zero_is_placeholder)
                if not factors.reshape(target):
                    return None
            factors.permute(layer.second_transpose)
        return factors

    def shape(self):
        return [math.prod(self.sizes[f] for f in dim) for dim in self.dims]

    def permute(self, permutation):
        self.dims = [self.dims[d] for d in tuple(permutation)[:len(self.dims)]]

    def reshape(self, shape):
        """Regroup the factors, in row-major order, into dims of `shape`, splitting a factor where a dim ends inside
        it; False when that factor's size is not a multiple of the part the dim needs."""
        queue, dims = [f for dim in self.dims for f in dim], []
        for size in shape:
            group, volume = [], 1
            while volume < size:
                factor = queue.pop(0)
                if size % (volume * self.sizes[factor]) != 0:
                    needed = size // volume
                    if self.sizes[factor] % needed != 0:
                        return False
                    factor, rest = self._split(factor, needed)
                    queue.insert(0, rest)
                group.append(factor)
                volume *= self.sizes[factor]
            dims.append(group)
        if dims:
            dims[-1].extend(queue)  # factors of size 1 left over
        self.dims = dims
        return True

    def _split(self, factor, outer):
        """Split `factor` into an outer factor of size `outer` and the inner rest: (outer id, inner id)."""
        first, second = len(self.sizes), len(self.sizes) + 1
        self.sizes += [outer, self.sizes[factor] // outer]
        position = self.memory.index(factor)
        self.memory[position:position + 1] = [first, second]
        return first, second

    def view(self):
        """(the input's shape split into the factors, the permutation to the output's order, the output's shape)."""
        position = {factor: index for index, factor in enumerate(self.memory)}
        grouped = [f for dim in self.dims for f in dim]
        leftover = [f for f in self.memory if f not in set(grouped)]  # size-1 factors of a reshape to rank 0
        order = [position[f] for f in grouped + leftover]
        return [self.sizes[f] for f in self.memory], order, self.shape()
