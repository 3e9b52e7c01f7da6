"""Regional code generation: a program whose layers repeat (a transformer's blocks) generates one block's code.

Inductor's time grows with the graph it lowers, schedules and writes code for, and a transformer is one block
written out a dozen times. So the traced program (ATen ops, its weights among its inputs) is split into regions:
the nodes before the longest run of repeated blocks, one block, and the nodes after the run. Each region is
compiled once, and the block's code is called on each block's values and weights, as PyTorch's regional
compilation compiles a repeated module once:

    prefix(inputs, weights) -> block(values, block 1's weights) -> ... -> block(values, block n's weights) -> suffix

Blocks are found in the traced graph, so finding them needs no knowledge of layers: a run of spans of nodes that
match node for node (same op, same literal arguments, each argument made at the same place in the span, or read
from outside it with the same shape, strides and dtype). A block starts before a GEMM, convolution or attention
kernel where it can (values crossing there are stored for that kernel anyway, so no fused kernel is split), and
where the fewest values cross into it.
"""

import operator

import numpy as np
import torch
import torch.fx

MIN_SAVED_NODES = 32  # a shorter repetition stays in one region: it would save less code generation than it costs
_LIBRARY_KERNELS = {"mm", "addmm", "bmm", "baddbmm", "convolution", "scaled_dot_product_attention"}  # not generated
_VIEWS = {"reshape", "view", "_unsafe_view", "permute", "transpose", "t", "expand", "alias", "unsqueeze", "squeeze",
          "slice", "select", "getitem"}


def split(graph_module):
    """The traced `graph_module` as calls [(region, argument nodes, result nodes)] in order: a region is a
    GraphModule computing its result nodes from its argument nodes, and the blocks of a run share one region."""
    nodes = [node for node in graph_module.graph.nodes if node.op == "call_function"]
    blocks = _repeated_blocks(nodes)
    if not blocks:
        return [_call(nodes)] if nodes else []  # a program of no ops returns its inputs or constants
    first, end = nodes.index(blocks[0][0]), nodes.index(blocks[-1][-1]) + 1
    exported = sorted(set().union(*(_exported(block) for block in blocks)))  # positions any block's reader needs
    shared = _region(blocks[0], _externals(blocks[0]), [blocks[0][i] for i in exported])
    calls = [_call(nodes[:first])] if first else []
    calls += [(shared, _externals(block), [block[i] for i in exported]) for block in blocks]
    calls += [_call(nodes[end:])] if end < len(nodes) else []
    if not all(_is_tensor(result) for _, _, results in calls for result in results):
        return [_call(nodes)]  # a cut between an op of several results and their readers: no region returns a tuple
    return calls


def _call(span):
    arguments, results = _externals(span), [span[i] for i in _exported(span)]
    return _region(span, arguments, results), arguments, results


def _region(span, arguments, results):
    """A GraphModule of the nodes of `span`, taking `arguments` and returning `results`."""
    graph, values = torch.fx.Graph(), {}
    for index, node in enumerate(arguments):
        values[node] = graph.placeholder(f"argument{index}")
        values[node].meta = dict(node.meta)
    for node in span:
        values[node] = graph.node_copy(node, values.__getitem__)
    graph.output([values[node] for node in results])
    return torch.fx.GraphModule(torch.nn.Module(), graph, class_name="Region")


def _repeated_blocks(nodes):
    """The spans of the longest run of repeated blocks in `nodes` (module docstring); [] where none saves
    MIN_SAVED_NODES nodes."""
    found = _longest_run([_key(node) for node in nodes])
    if found is None:
        return []
    start, period, count, slack = found
    end, readers = start + count * period + slack, _last_readers(nodes)

    def cost(cut):  # tensors crossing it, then a cut before a GEMM, then the most blocks, then the fewest crossing
        crossing = [nodes[i] for i in np.flatnonzero(readers[:cut] >= cut)]
        return (not all(map(_is_tensor, crossing)), not _before_a_library_kernel(nodes, cut),
                -((end - cut) // period), len(crossing))

    start = min(range(start, start + period), key=cost)
    blocks = [nodes[start + k * period:][:period] for k in range((end - start) // period)]
    signature = _signature(blocks[0])[0]
    blocks = blocks[:next((k for k, block in enumerate(blocks) if _signature(block)[0] != signature), len(blocks))]
    return blocks if period * (len(blocks) - 1) >= MIN_SAVED_NODES else []


def _before_a_library_kernel(nodes, cut):
    """Whether the ops from `cut` on start with a GEMM, convolution or attention kernel, views aside: values
    crossing such a cut are stored for that kernel anyway, so the cut splits no fused kernel. (A cut before a
    residual sum's normalization would store the sum in its dtype, where one kernel would keep it in float32.)"""
    for node in nodes[cut:]:
        name = getattr(node.target, "_opname", getattr(node.target, "__name__", ""))
        if name not in _VIEWS:
            return name in _LIBRARY_KERNELS or name.startswith("_scaled_dot_product")
    return False


def _longest_run(keys):
    """(start, period, count, slack) of the run of `count` >= 2 consecutive spans of `period` equal keys that saves
    the most keys (period * (count - 1)), `slack` being how far its first span may start later and keep `count`;
    None where no run saves MIN_SAVED_NODES."""
    codes = np.array(_numbered(keys), dtype=np.int64)
    best, saved = None, MIN_SAVED_NODES - 1
    for period in range(1, len(codes) // 2 + 1):
        same = np.concatenate(([False], codes[period:] == codes[:-period], [False]))
        edges = np.flatnonzero(same[1:] != same[:-1])  # where runs of `same` start and end, alternately
        if not len(edges):
            continue
        lengths = edges[1::2] - edges[::2]
        longest = int(np.argmax(lengths))
        count = int(lengths[longest]) // period + 1  # the run's keys repeat with this period over length + period
        if period * (count - 1) > saved:
            saved = period * (count - 1)
            best = int(edges[2 * longest]), period, count, int(lengths[longest]) % period
    return best


def _numbered(keys):
    """Each key as the index of its first occurrence's distinct value."""
    numbers = {}
    return [numbers.setdefault(key, len(numbers)) for key in keys]


def _key(node):
    """What a node computes from what kinds of values, whoever makes them: equal keys are needed to repeat."""
    return node.target, _literal(node.args, _describe), _literal(node.kwargs, _describe)


def _signature(span):
    """(what `span` computes, the nodes outside it that it reads): a reading of one of its own nodes is that node's
    position in it, a reading of another node is that node's number in order of first reading, and its kind."""
    inside, outside = {node: index for index, node in enumerate(span)}, {}

    def reference(node):
        if node in inside:
            return "inside", inside[node]
        return "outside", outside.setdefault(node, len(outside)), _describe(node)

    return tuple((node.target, _literal(node.args, reference), _literal(node.kwargs, reference)) for node in span), \
        list(outside)


def _externals(span):
    return _signature(span)[1]


def _exported(span):
    """Positions in `span` of the nodes read after it."""
    inside = set(span)
    return [index for index, node in enumerate(span) if any(user not in inside for user in node.users)]


def _last_readers(nodes):
    """For each node, the position of its last reader (len(nodes) for the graph's output)."""
    position = {node: index for index, node in enumerate(nodes)}
    return np.array([max((position.get(user, len(nodes)) for user in node.users), default=index)
                     for index, node in enumerate(nodes)])


def _literal(value, reference):
    """`value` (an argument) as a hashable value with each node replaced by reference(node); types kept, so that
    1, 1.0 and True differ."""
    if isinstance(value, torch.fx.Node):
        return reference(value)
    if isinstance(value, (list, tuple)):
        return tuple(_literal(item, reference) for item in value)
    if isinstance(value, dict):
        return tuple((key, _literal(item, reference)) for key, item in value.items())
    return type(value), value


def _describe(node):
    """A node's value as what a region's code assumes of it: shape, strides, dtype and device of each tensor."""
    return _meta(_traced_value(node))


def _traced_value(node):
    """The traced value of `node`, a fake tensor where the trace recorded one."""
    if node.op == "get_attr" and "val" not in node.meta:
        return _attribute(node)
    return node.meta.get("val")


def _attribute(node):
    """The value a get_attr node reads (its meta value may be a fake copy)."""
    return operator.attrgetter(node.target)(node.graph.owning_module)


def _meta(value):
    if isinstance(value, torch.Tensor):
        return tuple(value.shape), value.stride(), value.dtype, value.device
    if isinstance(value, (list, tuple)):
        return tuple(_meta(item) for item in value)
    return type(value), value


def _is_tensor(node):
    return isinstance(_traced_value(node), torch.Tensor)


class CompiledRegions:
    """Runs a traced graph as calls of its regions' compiled code (split), dropping each value after its last
    reader, as the generated program does; the graph's placeholders are `weights` and then the inputs."""

    def __init__(self, graph_module, weights, calls, compile_region):
        """compile_region(region, example values of its arguments) -> a callable; once per distinct region."""
        graph = graph_module.graph
        placeholders = [node for node in graph.nodes if node.op == "placeholder"]
        slots = {node: slot for slot, node in enumerate(graph.nodes)}
        self._initial = [None] * len(slots)
        for node, weight in zip(placeholders, weights):
            self._initial[slots[node]] = weight
        for node in graph.nodes:
            if node.op == "get_attr":
                self._initial[slots[node]] = _attribute(node)
        self._inputs = [slots[node] for node in placeholders[len(weights):]]
        (output,) = [node for node in graph.nodes if node.op == "output"]
        self._outputs = [slots[node] for node in output.args[0]]
        compiled = {}
        for region, arguments, _ in calls:
            if id(region) not in compiled:
                compiled[id(region)] = compile_region(region, [_traced_value(node) for node in arguments])
        last_step = {}  # slot -> the last call reading or making it
        for step, (_, arguments, results) in enumerate(calls):
            last_step.update((slots[node], step) for node in [*arguments, *results])
        kept = {slot for slot, value in enumerate(self._initial) if value is not None} | set(self._outputs)
        self._steps = [(compiled[id(region)], [slots[n] for n in arguments], [slots[n] for n in results],
                        [slot for slot, last in last_step.items() if last == step and slot not in kept])
                       for step, (region, arguments, results) in enumerate(calls)]

    def __call__(self, *inputs):
        values = self._initial.copy()
        for slot, tensor in zip(self._inputs, inputs):
            values[slot] = tensor
        for function, arguments, results, dying in self._steps:
            for slot, tensor in zip(results, function(*[values[slot] for slot in arguments])):
                values[slot] = tensor
            for slot in dying:
                values[slot] = None
        return [values[slot] for slot in self._outputs]
