"""Specialization to the compiled inputs: fold what their rank, dtype and device decide, and the branches it picks.

A scripted module checks tensor metadata in Python `if`s (nn.MultiheadAttention's fast-path checks:
`query.dim() == 3`, dtypes, device type, `requires_grad`, autocast), so its graph keeps prim::If nodes
that the partitioner must leave in PyTorch, splitting every attention block out of the engines.
Those conditions are fixed once the inputs are: an engine checks each input's rank, dtype and device
on every call, compiled modules are inference-only (an input that requires grad is refused while grad
mode is on) and engines run in the precision they were built for, whatever autocast says.
The same holds for sizes when every input shape is static (swin's window padding decides its `if`s
from sizes); with a dynamic input, sizes stay values.

`specialize(graph, analyze, device, static_shapes)` replaces by constants the queries whose answers
decide something LibTorch's folding cannot see through (a branch, a loop, a number read back from a traced size's
0-d tensor, or an in-place write into a tensor they shaped: swin's attention mask), using the ranks, dtypes and
sizes shape analysis sees (`analyze()` gives {Value: TensorInfo} of top-level values; it runs the graph, so it is
called only when there are such queries). Constant propagation then folds the conditions and inlines the
branches taken. Other queries stay: the partitioner's evaluators compute them inside the engines.
Values computed from tensor data are never folded. Returns whether the graph changed.
"""

import torch

from ..targets.dtypes import SCALAR_TYPE_CODES
from . import builtin
from .mutation import DATA_READERS, writes_in_place
from .passes.list_comprehensions import fold_list_comprehensions
from .rewrite import insert_int_list


def specialize(graph, analyze, device, static_shapes):
    """Fold the metadata queries of the tensors shape analysis describes (and their sizes when every input shape is
    `static_shapes`), then the branches they decide; True if any folded."""
    folded = [node for node in graph.findAllNodes("aten::is_autocast_enabled") if not list(node.inputs())]
    for node in folded:
        _replace(graph, node, False)
    answers = {**_QUERIES, **(_SIZES if static_shapes else {})}
    inert = set()
    queries = [(node, answer) for kind, answer in answers.items() for node in graph.findAllNodes(kind)
               if _decides(node.output(), inert)]
    factories = [node for kind in _FACTORIES for node in graph.findAllNodes(kind)
                 if _decides(node.output(), inert)]
    infos = analyze() if queries or factories else {}
    for node in factories:
        info = infos.get(node.inputsAt(0))
        if hasattr(info, "dtype"):
            _make_fresh(graph, node, info, torch.device(device))
            folded.append(node)
    for node, answer in queries:
        info = infos.get(node.inputsAt(0))
        follows_data = getattr(infos.get(node.output()), "follows_data", False)  # a size a data-decided branch gave
        value = answer(node, info, torch.device(device)) if hasattr(info, "dtype") and not info.problem \
            and not follows_data else None
        if value is not None:
            _replace(graph, node, value)
            folded.append(node)
    for kind, same in (("aten::__is__", True), ("aten::__isnot__", False)):
        for node in graph.findAllNodes(kind):
            if node.inputsAt(0) is node.inputsAt(1):
                _replace(graph, node, same)
                folded.append(node)
    if not folded:
        return False
    for node in folded:
        node.destroy()
    builtin.constant_propagation(graph)
    fold_list_comprehensions(graph)  # of a count that was a rank (F.interpolate's scale factors)
    builtin.constant_propagation(graph)
    _fold_agreeing_branches(graph.block())
    _unpack_constructed_tuples(graph)
    builtin.eliminate_dead_code(graph)
    for node in graph.findAllNodes("aten::is_grad_enabled"):  # a query dead code elimination keeps
        if not node.output().uses():
            node.destroy()
    return True


# A branch or loop, or a read of a tensor's value into a number: under tracing, sizes are 0-d tensors, and arithmetic on
# them (transformers' torch_int: ceil(h / p) * p) reaches aten::Int, which the partitioner leaves in PyTorch as a read of
# tensor data unless it reads a constant.
_DECIDING = {"prim::If", "prim::Loop", *DATA_READERS}


def _decides(value, inert):
    """Whether `value` flows into a branch or loop condition, a number read from a tensor, or an in-place write.
    `inert` holds the values known not to, shared between calls: a walk that finds no such use settles every value it
    met, so the next walk stops there (a transformer has a hundred size queries whose walks would each cover the rest
    of the graph)."""
    seen, pending = {value}, [value]
    while pending:
        for use in pending.pop().uses():
            user = use.user
            if user.kind() in _DECIDING or writes_in_place(user) or _is_loop_condition(use):
                return True
            for output in _receivers(use):
                if output not in seen and output not in inert:
                    seen.add(output)
                    pending.append(output)
    inert |= seen
    return False


def _block_owner(use):
    """The If or Loop whose block returns the used value, or None when the use is not a block's return."""
    return use.user.owningBlock().owningNode() if use.user.kind() == "prim::Return" else None


def _is_loop_condition(use):
    owner = _block_owner(use)
    return owner is not None and owner.kind() == "prim::Loop" and use.offset == 0


def _receivers(use):
    """The values a use passes its value on to: the user's outputs, or the If's (Loop's) output a block returns."""
    owner = _block_owner(use)
    if owner is None:
        return list(use.user.outputs())
    return [owner.outputsAt(use.offset - (owner.kind() == "prim::Loop"))]


_QUERIES = {  # node kind -> (node, TensorInfo of its tensor input, engine device) -> its value at run time, or None
    "aten::dim": lambda node, info, device: len(info.opt_shape),
    "prim::dtype": lambda node, info, device: SCALAR_TYPE_CODES[info.dtype],
    "aten::is_floating_point": lambda node, info, device: info.dtype.is_floating_point,
    "prim::requires_grad": lambda node, info, device: False,
    "prim::device": lambda node, info, device: device,
    "prim::is_cuda": lambda node, info, device: device.type == "cuda",
}
_SIZES = {"aten::size": lambda node, info, device: _size(node, info.opt_shape)}


def _size(node, shape):
    """`aten::size(x)` or `aten::size(x, dim)` with a constant dim, or None."""
    if node.inputsSize() == 1:
        return list(shape)
    dim = node.inputsAt(1).toIValue()
    return shape[dim] if isinstance(dim, int) and -len(shape) <= dim < len(shape) else None


_FACTORIES = {"aten::new_zeros": "aten::zeros", "aten::new_ones": "aten::ones"}


def _make_fresh(graph, node, info, device):
    """`x.new_zeros(size)` -> `zeros(size, dtype=x.dtype, device=x.device)`: the new tensor no longer reads x, so
    constant folding can see it is made from constants only."""
    size, dtype, layout, on, pin_memory = list(node.inputs())[1:]
    with graph.insert_point_guard(node):
        if dtype.node().mustBeNone():
            dtype = graph.insertConstant(SCALAR_TYPE_CODES[info.dtype])
        if on.node().mustBeNone():
            on = graph.insertConstant(device)
        fresh = graph.insertNode(graph.create(_FACTORIES[node.kind()], [size, dtype, layout, on, pin_memory]))
    fresh.output().setType(node.output().type())
    node.output().replaceAllUsesWith(fresh.output())


def _replace(graph, node, value):
    """Make the uses of `node`'s output read the constant `value` instead; a list of sizes as a new list on every
    run (a ListConstruct of constants), as `x.size()` gives one: the code may write to it (`s = x.size(); s[0] = -1`),
    and a constant list would keep every run's writes."""
    with graph.insert_point_guard(node):
        constant = insert_int_list(graph, value) if isinstance(value, list) else graph.insertConstant(value)
    node.output().replaceAllUsesWith(constant)


def _fold_agreeing_branches(block):
    """An If output that every branch gives as the same constant is that constant, whatever the condition."""
    for node in block.nodes():
        for inner in node.blocks():
            _fold_agreeing_branches(inner)
        if node.kind() != "prim::If":
            continue
        branches = [list(inner.outputs()) for inner in node.blocks()]
        for index, output in enumerate(node.outputs()):
            values = [outputs[index] for outputs in branches]
            if all(v.node().kind() == "prim::Constant" for v in values) and _same_constant(values):
                with block.owningGraph().insert_point_guard(node):
                    output.replaceAllUsesWith(block.owningGraph().insertConstant(values[0].toIValue()))


def _unpack_constructed_tuples(graph):
    """TupleUnpack(TupleConstruct(a, b)) is (a, b): what an inlined branch returned as a tuple (LibTorch's peephole
    keeps the pair when the unpacked types are wider, e.g. Tensor? for a Tensor)."""
    for unpack in graph.findAllNodes("prim::TupleUnpack"):
        construct = unpack.input().node()
        if construct.kind() == "prim::TupleConstruct":
            for output, value in zip(unpack.outputs(), construct.inputs()):
                output.replaceAllUsesWith(value)


def _same_constant(values):
    first = values[0].toIValue()
    if isinstance(first, torch.Tensor):
        return False
    return all(type(v.toIValue()) is type(first) and v.toIValue() == first for v in values[1:])
