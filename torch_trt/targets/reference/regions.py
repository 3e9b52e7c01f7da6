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

A cut still stores in its dtype each value that crosses it, where inductor, compiling the graph whole, may keep a
value that only pointwise code reads (a residual sum read by the next sum) in float32 and recompute it from its
operands, never rounded: ViT-B/16's half-precision engine, cut by layers, read 8% further from float32 (mean max
error 3.36e-3 over six inputs, against 3.11e-3 whole), and with inductor made to store every value, whole and
regional engines read the same. So a half-precision value that crosses into code that reads it only through
pointwise ops and reductions crosses in float32: its region returns it widened, and the region reading it narrows
it back inside its code, where inductor keeps it in float32 (ViT-B/16: 3.00e-3).
"""

import operator

import numpy as np
import torch
import torch.fx

from ..dtypes import HALF_DTYPES

_CONVERT = torch.ops.prims.convert_element_type.default
MIN_SAVED_NODES = 32  # a shorter repetition stays in one region: it would save less code generation than it costs
_LIBRARY_KERNELS = {"mm", "addmm", "bmm", "baddbmm", "convolution", "scaled_dot_product_attention"}  # not generated
_VIEWS = {"reshape", "view", "_unsafe_view", "permute", "transpose", "t", "expand", "alias", "unsqueeze", "squeeze",
          "slice", "select", "getitem"}


def split(graph_module):
    """The traced `graph_module` as calls [(region, argument nodes, result nodes)] in order: a region is a
    GraphModule computing its result nodes from its argument nodes, and the blocks of a run share one region."""
    nodes = [node for node in graph_module.graph.nodes if node.op == "call_function"]
    blocks, block_arguments = _repeated_blocks(nodes)
    if not blocks:
        return _undivided(nodes)
    first, end = nodes.index(blocks[0][0]), nodes.index(blocks[-1][-1]) + 1
    exported = sorted(set().union(*(_exported(block) for block in blocks)))  # positions any block's reader needs
    block_ends = [(arguments, [block[i] for i in exported]) for block, arguments in zip(blocks, block_arguments)]
    prefix, suffix = nodes[:first], nodes[end:]
    prefix_ends, suffix_ends = _ends(prefix), _ends(suffix)  # ([], []) for an empty one
    every_end = [*block_ends, prefix_ends, suffix_ends]
    if not all(_is_tensor(result) for _, results in every_end for result in results):
        return _undivided(nodes)  # a cut between an op of several results and their readers
    widened = _widened(every_end, block_ends)
    shared = _region(blocks[0], *block_ends[0], widened)
    calls = [_call(prefix, prefix_ends, widened)] if prefix else []
    calls += [(shared, *ends) for ends in block_ends]
    return calls + ([_call(suffix, suffix_ends, widened)] if suffix else [])


def _undivided(nodes):
    """The calls of a program compiled as one region; none for a program of no ops (it returns inputs or constants)."""
    return [_call(nodes, _ends(nodes), set())] if nodes else []


def _ends(span):
    """(the nodes outside `span` that it reads, the nodes of `span` read after it)."""
    return _externals(span), [span[i] for i in _exported(span)]


def _call(span, ends, widened):
    return _region(span, *ends, widened), *ends


def _widened(ends, block_ends):
    """The values that cross in float32 (module docstring): half-precision results of a region that every reader
    reads only through pointwise ops and reductions, the program's outputs aside. The blocks share one region's
    code, so a block's argument or result position is widened in every block or in none."""
    widened = {node for _, results in ends for node in results if _traced_value(node).dtype in HALF_DTYPES and all(
        user.op == "call_function" and not _reads_into_a_library_kernel(user) for user in node.users)}
    changed = True
    while changed:
        changed = False
        for side in (0, 1):  # arguments, results
            for same_place in zip(*[block[side] for block in block_ends]):
                if widened.intersection(same_place) and not widened.issuperset(same_place):
                    widened.difference_update(same_place)
                    changed = True
    return widened


def _reads_into_a_library_kernel(node):
    """Whether `node` is, or makes a view read by, a GEMM, convolution or attention kernel."""
    if _op_name(node) in _VIEWS:
        return any(_reads_into_a_library_kernel(user) for user in node.users)
    return _is_library_kernel(node)


def _region(span, arguments, results, widened):
    """A GraphModule of the nodes of `span`, taking `arguments` and returning `results`, the `widened` ones of both
    in float32."""
    graph, values = torch.fx.Graph(), {}
    for index, node in enumerate(arguments):
        values[node] = placeholder = graph.placeholder(f"argument{index}")
        placeholder.meta = dict(node.meta)
        if node in widened:
            placeholder.meta["val"] = _traced_value(node).to(torch.float32)
            values[node] = graph.call_function(_CONVERT, (placeholder, _traced_value(node).dtype))
            values[node].meta["val"] = _traced_value(node)
    for node in span:
        values[node] = graph.node_copy(node, values.__getitem__)
    outputs = []
    for node in results:
        outputs.append(values[node])
        if node in widened:
            outputs[-1] = graph.call_function(_CONVERT, (values[node], torch.float32))
            outputs[-1].meta["val"] = _traced_value(node).to(torch.float32)
    graph.output(outputs)
    return torch.fx.GraphModule(torch.nn.Module(), graph, class_name="Region")


def _repeated_blocks(nodes):
    """(the spans of the longest run of repeated blocks in `nodes` (module docstring), the nodes outside each that it
    reads); ([], []) where none saves MIN_SAVED_NODES nodes."""
    found = _longest_run([_key(node) for node in nodes])
    if found is None:
        return [], []
    start, period, count, slack = found
    end, readers = start + count * period + slack, _last_readers(nodes)

    def cost(cut):  # tensors crossing it, then a cut before a GEMM, then the most blocks, then the fewest crossing
        crossing = [nodes[i] for i in np.flatnonzero(readers[:cut] >= cut)]
        return (not all(map(_is_tensor, crossing)), not _before_a_library_kernel(nodes, cut),
                -((end - cut) // period), len(crossing))

    start = min(range(start, start + period), key=cost)
    blocks = [nodes[start + k * period:][:period] for k in range((end - start) // period)]
    signatures = [_signature(block) for block in blocks]
    count = next((k for k, (computed, _) in enumerate(signatures) if computed != signatures[0][0]), len(blocks))
    if period * (count - 1) < MIN_SAVED_NODES:
        return [], []
    return blocks[:count], [externals for _, externals in signatures[:count]]


def _before_a_library_kernel(nodes, cut):
    """Whether the ops from `cut` on start with a GEMM, convolution or attention kernel, views aside: values
    crossing such a cut are stored for that kernel anyway, so the cut splits no fused kernel. (A cut before a
    residual sum's normalization would store the sum in its dtype, where one kernel would keep it in float32.)"""
    for node in nodes[cut:]:
        if _op_name(node) not in _VIEWS:
            return _is_library_kernel(node)
    return False


def _op_name(node):
    return getattr(node.target, "_opname", getattr(node.target, "__name__", ""))


def _is_library_kernel(node):
    name = _op_name(node)
    return name in _LIBRARY_KERNELS or name.startswith("_scaled_dot_product")


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
                compiled[id(region)] = compile_region(region, _examples(region, arguments))
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


def _examples(region, arguments):
    """Example values of a region's arguments: what the trace recorded, or a widened argument's float32 copy."""
    placeholders = [node for node in region.graph.nodes if node.op == "placeholder"]
    return [placeholder.meta["val"] if "val" in placeholder.meta else _traced_value(node)
            for placeholder, node in zip(placeholders, arguments)]
