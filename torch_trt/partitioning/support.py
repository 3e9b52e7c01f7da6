"""Whether a node can run in an engine, and if not why: the registries are the only source of truth for ops.

`unsupported_reason(node, settings)` asks the converter and evaluator registries and the user's
`torch_executed_ops`, and keeps reads of tensor data out of compile-time values. `engine_reason(node, settings, facts)` combines it with what the graph and
shape analysis know: control flow, in-place mutation, tensor dtypes (and int8/uint8 arithmetic, boundary.py) and
data-dependent shapes. `layout_reasons(nodes, infos)` keeps in PyTorch the nodes making a tensor whose strides a
node reads, where eager's are not an engine output's.
Each answer is None (the node may run in an engine) or a Reason with a code for the report.
"""

from ..conversion.registry import find_converter, find_evaluator, node_schema, schema_key
from ..errors import Code, Reason
from ..lowering.mutation import DATA_READERS, written_inputs
from ..lowering.rewrite import all_nodes
from ..targets.dtypes import ENGINE_DTYPES, TRUNCATED_DTYPES
from .boundary import small_int_problem


def op_names(node):
    """The names a user may give in torch_executed_ops for this node: kind, and kind.overload."""
    key = schema_key(node)
    names = {node.kind()}
    if key and key[1]:
        names.add(f"{key[0]}.{key[1]}")
    return names


def unmatched_executed_ops(graph, settings):
    """The torch_executed_ops entries that name no node of the (lowered) graph, sorted."""
    present = set().union(*map(op_names, all_nodes(graph.block())))
    return sorted(settings.torch_executed_ops - present)


_SCALAR_SOURCES = {"prim::Constant", "prim::NumToTensor"}  # tensors whose data is a constant or a plain value (a
# traced `x.size(0)` is NumToTensor(size) read back by aten::Int): reading them reads no tensor data


# Ops whose result depends on a tensor's strides or storage offset, not only its values: an engine's output is a
# contiguous copy, where eager's tensor may be a transposed or offset view.
LAYOUT_READERS = frozenset({"aten::as_strided", "aten::stride", "aten::is_contiguous", "aten::storage_offset"})


def reads_layout(graph):
    """Whether a node of the graph's top block reads a tensor's strides (LAYOUT_READERS)."""
    return any(node.kind() in LAYOUT_READERS for node in graph.nodes())


def layout_reasons(nodes, infos):
    """{node: Reason} for the nodes that must run in PyTorch so that a node reading strides sees eager's: the
    producers of each tensor it reads that is not contiguous from its storage's start in eager (shape analysis's
    TensorInfo.contiguous), and theirs in turn, since a view's strides follow its input's."""
    pending = [(value, reader) for reader in nodes if reader.kind() in LAYOUT_READERS
               for value in reader.inputs() if is_tensor(value)]
    reasons = {}
    while pending:
        value, reader = pending.pop()
        producer, info = value.node(), infos.get(value)
        if producer in reasons or producer.kind() in ("prim::Param", "prim::Constant") or info is None \
                or info.contiguous:
            continue
        reasons[producer] = Reason(Code.LAYOUT, f"{reader.kind()} reads the strides of %{value.debugName()}, which "
                                                "is not contiguous in eager; an engine's output is a contiguous copy")
        pending += [(v, reader) for v in producer.inputs() if is_tensor(v)]
    return reasons


def unsupported_reason(node, settings):
    """None when the registries can convert or evaluate the node and the user did not send it to PyTorch."""
    if op_names(node) & settings.torch_executed_ops:
        return Reason(Code.USER_REQUEST, "sent to PyTorch by torch_executed_ops")
    if node.kind() in DATA_READERS and any(is_tensor(v) and v.node().kind() not in _SCALAR_SOURCES
                                           for v in node.inputs()):
        return Reason(Code.DATA_DEPENDENT, "reads a value from tensor data, which differs between calls; it runs "
                                           "in PyTorch and what depends on it reaches engines as a tensor or not at all")
    registration = find_converter(node) or find_evaluator(node)
    if registration is None:
        return Reason(Code.NO_CONVERTER, "no converter or evaluator for this schema")
    if registration.supports is not None and not registration.supports(node, settings):
        return Reason(Code.UNSUPPORTED_ARGUMENTS, "the converter does not support these arguments")
    return None


def is_converted(node):
    """Whether a converter (not an evaluator) handles the node: what min_block_size counts."""
    return find_converter(node) is not None


def is_tensor(value):
    return value.type().kind() == "TensorType"


def engine_reason(node, settings, facts):
    """None when the node may run in an engine, else the first reason it cannot.

    `facts` gives `info(value)` (a tensor's TensorInfo, or None) and `has_writers(value)` (alias analysis).
    """
    for check in (_control_flow, _mutation, _registries, _dtypes, _shapes):
        reason = check(node, settings, facts)
        if reason is not None:
            return reason
    return None


def boundary_problem(value, info, settings):
    """Why `value` (with TensorInfo `info`) may not enter an engine from outside it, or None."""
    if not is_tensor(value):
        return Reason(Code.NON_TENSOR, f"reads the non-tensor %{value.debugName()} ({value.type()}) from PyTorch")
    return None


def _control_flow(node, settings, facts):
    if list(node.blocks()):
        return Reason(Code.CONTROL_FLOW, f"{node.kind()} has sub-blocks; control flow runs in PyTorch")
    return None


def _mutation(node, settings, facts):
    """In-place ops, and views of tensors something writes to: an engine's outputs are copies, not aliases."""
    written = written_inputs(node)
    if written:
        return Reason(Code.MUTATION, f"writes to its input %{written[0].debugName()} in place")
    schema = node_schema(node)
    if schema is None:
        return None
    aliased = {name for out in schema.returns if out.alias_info is not None for name in out.alias_info.before_set}
    for argument, value in zip(schema.arguments, node.inputs()):
        info = argument.alias_info
        # Tensor(a -> *): the views are the elements of a returned list (chunk, split, unbind)
        viewed = info is not None and (aliased & info.before_set or "*" in info.after_set)
        if viewed and facts.has_writers(value):
            return Reason(Code.MUTATION, f"returns a view of %{value.debugName()}, which is written in place")
    return None


def _registries(node, settings, facts):
    return unsupported_reason(node, settings)


def _dtypes(node, settings, facts):
    allowed = set(ENGINE_DTYPES) | (set(TRUNCATED_DTYPES) if settings.truncate_long_and_double else set())
    for value in list(node.inputs()) + list(node.outputs()):
        info = facts.info(value)
        if info is not None and info.dtype not in allowed:
            hint = " (allowed with truncate_long_and_double=True)" if info.dtype in TRUNCATED_DTYPES else ""
            return Reason(Code.DTYPE, f"tensor %{value.debugName()} has dtype {info.dtype}{hint}")
    return small_int_problem(node, facts)


def _shapes(node, settings, facts):
    """Refuse a node reading a tensor no engine profile describes, or making one whose rank or dims the data decides
    (an engine's outputs have the shapes its inputs fix)."""
    for value in node.inputs():
        info = facts.info(value)
        if info is not None and info.problem:
            return Reason(Code.SHAPE, f"input %{value.debugName()} {info.problem}")
    for value in node.outputs():
        info = facts.info(value)
        if info is not None and not info.shape_fixed_by_inputs:
            return Reason(Code.SHAPE, f"output %{value.debugName()} {info.problem}")
    return None
