"""What each argument and result of a dynamo FX graph is, for the engine that replaces it.

Dynamo calls the compiled graph with its placeholders' values, in order. A user tensor becomes
an engine input. A parameter, a buffer, or a Python number dynamo passes as a tensor or SymInt
is baked into the engine as a constant (each call checks it is unchanged). A SymInt that is a
dim of a user input is recomputed from that input inside the traced graph, so it stays dynamic.
Results are tensors (from the engine), constants, size expressions evaluated per call, or views: a result that
is a view of an argument or of another result is made again per call as that view (as_strided), since an engine's
outputs are copies and the code that reads a graph's results may write through such a view (dynamo splits a
function at a graph break, and the rest of it writes to what the graph returned).
"""

import operator
from dataclasses import dataclass

import sympy
import torch
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, statically_known_true
from torch.multiprocessing.reductions import StorageWeakRef

INPUT, BAKED, SIZE = "input", "baked", "size"
_UNKNOWN = object()


class UnsupportedGraph(Exception):
    """The graph cannot become an engine; the message says why (the backend then runs it in PyTorch)."""


@dataclass
class GraphSignature:
    """Placeholders as (kind, ref): (INPUT, input index), (BAKED, None) or (SIZE, (input index, dim))."""

    args: list
    input_positions: list  # argument positions of the user tensors, in engine-input order
    input_dims: list  # per user tensor, per dim: None when static, else its sympy expression
    symbols: dict  # sympy.Symbol -> (input index, dim) where its value can be read
    shape_env: object  # dynamo's ShapeEnv (None when the graph has no symbolic shapes)
    fakes: list  # each placeholder's example value (fake tensor or SymInt), for dynamo's guards
    outputs: list  # ("tensor", index into the traced outputs) | ("const", value) | ("sym", expr) | ("view", View)
    output_type: type  # tuple, list, or None for a single result
    hidden: list  # names of the nodes returned after the results only as the base of their views (_shared_bases)

    @property
    def baked_positions(self):
        return [p for p, (kind, _) in enumerate(self.args) if kind == BAKED]

    @property
    def tensor_outputs(self):
        return [i for i, (kind, _) in enumerate(self.outputs) if kind == "tensor"]

    @property
    def is_dynamic(self):
        return any(e is not None for dims in self.input_dims for e in dims)

    def pack(self, engine_outputs, args):
        """The graph's result from the engine outputs, the constants, the sizes of this call's arguments and the views
        of either."""
        flat, next_tensor, sizes = [], 0, None
        for kind, value in self.outputs:
            if kind == "tensor":
                flat.append(engine_outputs[next_tensor])
                next_tensor += 1
            elif kind == "const":
                flat.append(value)
            else:
                sizes = self._sizes(args) if sizes is None else sizes
                flat.append(int(value.xreplace(sizes)) if kind == "sym" else None)
        for index, (kind, view) in enumerate(self.outputs):
            if kind == "view":
                base = args[view.base] if view.of_argument else flat[view.base]
                flat[index] = base.as_strided(*(_evaluated(part, sizes) for part in (view.size, view.stride)),
                                              base.storage_offset() + _evaluated(view.offset, sizes))
        return flat[0] if self.output_type is None else self.output_type(flat[:len(flat) - len(self.hidden)])

    def _sizes(self, args):
        return {s: args[self.input_positions[k]].shape[d] for s, (k, d) in self.symbols.items()}


@dataclass(frozen=True)
class View:
    """A result that views the memory of argument `base` (of_argument) or of result `base`: its size, stride and
    storage offset past the base's own, each an int or a sympy expression of the input sizes. Past the base's, since
    dynamo compiles no graph again for an argument of another storage offset (x[1:] of a batch)."""

    base: int
    of_argument: bool
    size: tuple
    stride: tuple
    offset: object


def _evaluated(part, sizes):
    if isinstance(part, tuple):
        return tuple(_evaluated(p, sizes) for p in part)
    return part if isinstance(part, int) else int(part.xreplace(sizes))


def signature_of(gm, example_inputs):
    """Classify the graph's placeholders and results; UnsupportedGraph when a value has no engine form."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise UnsupportedGraph(f"{len(placeholders)} placeholders but {len(example_inputs)} example inputs")
    kinds = [_kind(node, value) for node, value in zip(placeholders, example_inputs)]
    input_positions = [p for p, kind in enumerate(kinds) if kind == INPUT]
    input_dims = [_symbolic_dims(placeholders[p], example_inputs[p]) for p in input_positions]
    symbols = {}
    for k, dims in enumerate(input_dims):
        for d, expr in enumerate(dims):
            if isinstance(expr, sympy.Symbol):
                symbols.setdefault(expr, (k, d))
    args = []
    for position, (node, value, kind) in enumerate(zip(placeholders, example_inputs, kinds)):
        expr = _expr(node.meta.get("example_value", value)) if isinstance(value, torch.SymInt) else None
        if expr is not None and expr in symbols:
            args.append((SIZE, symbols[expr]))
        elif kind == INPUT:
            args.append((INPUT, input_positions.index(position)))
        elif isinstance(value, torch.SymInt) and value.node.hint is None:
            raise UnsupportedGraph(f"placeholder {node.name} is a SymInt with no value ({value})")
        else:
            args.append((BAKED, None))
    _refuse_numbers_read_from_tensors(gm, {node for node, kind in zip(placeholders, kinds) if kind == BAKED})
    _refuse_writes_into_parameters(gm, [node for node, value in zip(placeholders, example_inputs)
                                        if isinstance(value, torch.nn.Parameter)])
    try:
        outputs, output_type, hidden = _outputs(gm, symbols, placeholders)
    except GuardOnDataDependentSymNode as error:  # a result whose size follows tensor data (dynamo's capture flags)
        raise UnsupportedGraph(f"a result's layout follows tensor data: {str(error).splitlines()[0]}") from error
    fakes = [node.meta.get("example_value") for node in placeholders]
    return GraphSignature(args, input_positions, input_dims, symbols, _shape_env(placeholders), fakes, outputs,
                          output_type, [node.name for node in hidden])


_READS_A_NUMBER = {("call_method", "item"), ("call_method", "tolist"), ("call_function", torch.ops.aten.item.default),
                   ("call_function", torch.ops.aten._local_scalar_dense.default)}


def _refuse_numbers_read_from_tensors(gm, baked):
    """UnsupportedGraph for a graph that reads a tensor's value into a Python number: traced into TorchScript, the
    number would be a constant, this call's value on every later call. Reading a baked placeholder is fine (dynamo
    passes a module's float attributes as 0-d tensors when dynamic): each call checks its value."""
    reads = [node.name for node in gm.graph.nodes
             if (node.op, node.target) in _READS_A_NUMBER and not set(node.all_input_nodes) <= baked]
    if reads:
        raise UnsupportedGraph(f"it reads a tensor's value into a Python number ({reads[0]}: .item() kept in the graph "
                               "by torch._dynamo.config.capture_scalar_outputs), which an engine would fix at this "
                               "call's value. Leave capture_scalar_outputs off: dynamo then breaks the graph there and "
                               "compiles the parts around it")


_IN_PLACE_OPERATORS = {operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
                       operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor, operator.ilshift,
                       operator.irshift, operator.imatmul, operator.setitem}


def _refuse_writes_into_parameters(gm, parameters):
    """UnsupportedGraph for a graph with an in-place op on the memory of a parameter (or a view of one), before
    anything runs it: building traces the graph on the parameters themselves (inputs and buffers are copied first),
    and a write such as `weight.mul_(0.5)` would happen once more per build."""
    memory = {_storage(_fake(node)) for node in parameters if _fake(node) is not None}
    for node in gm.graph.nodes:
        written = node.args[0] if node.args and _writes_in_place(node) else None
        if isinstance(written, torch.fx.Node) and _fake(written) is not None and _storage(_fake(written)) in memory:
            raise UnsupportedGraph(f"the graph writes into a parameter ({node.name}: {written.name}), which an "
                                   "engine cannot do")


def _writes_in_place(node):
    """Whether the node is an in-place op on its first argument (x.mul_(2), torch.relu_(x), x += y, x[0] = y,
    aten.add_)."""
    if node.op == "call_method":
        return node.target.endswith("_") and not node.target.startswith("__")
    if node.op != "call_function":
        return False
    if isinstance(node.target, torch._ops.OpOverload):
        return any(argument.alias_info is not None and argument.alias_info.is_write
                   for argument in node.target._schema.arguments[:1])
    name = getattr(node.target, "__name__", "")
    return node.target in _IN_PLACE_OPERATORS or (name.endswith("_") and not name.startswith("__"))


def _kind(node, value):
    if isinstance(value, (torch.SymInt, int, float, bool)):
        return BAKED
    if not isinstance(value, torch.Tensor):
        raise UnsupportedGraph(f"placeholder {node.name} is a {type(value).__name__}, not a tensor or SymInt")
    grapharg = node.meta.get("grapharg")
    source = grapharg.source.name if grapharg is not None and grapharg.source is not None else ""
    passed_as_tensor = getattr(grapharg, "pass_arg_as_tensor", False)  # a Python number wrapped by dynamo
    if isinstance(value, torch.nn.Parameter) or "._parameters[" in source or "._buffers[" in source \
            or passed_as_tensor:
        return BAKED
    return INPUT


def _expr(value):
    """The sympy expression of a SymInt (None for a plain int or a specialized one)."""
    if not isinstance(value, torch.SymInt):
        return None
    expr = value.node.expr
    return None if expr.is_number else expr


def _symbolic_dims(node, tensor):
    fake = node.meta.get("example_value")
    if not isinstance(fake, torch.Tensor) or fake.dim() != tensor.dim():
        return [None] * tensor.dim()
    return [_expr(d) for d in fake.shape]


def _shape_env(placeholders):
    for node in placeholders:
        fake = node.meta.get("example_value")
        mode = getattr(fake, "fake_mode", None)
        if mode is not None and mode.shape_env is not None:
            return mode.shape_env
    return None


def _outputs(gm, symbols, placeholders):
    result = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    output_type = type(result) if isinstance(result, (tuple, list)) else None
    flat = list(result) if output_type else [result]
    hidden = _shared_bases(gm, flat, placeholders)
    flat += hidden
    views = _views(flat, placeholders, symbols)
    outputs, tensors = [], 0
    for index, item in enumerate(flat):
        value = item.meta.get("example_value", _UNKNOWN) if isinstance(item, torch.fx.Node) else item
        if index in views:
            outputs.append(("view", views[index]))
        elif isinstance(value, torch.Tensor) or value is _UNKNOWN:  # no metadata: tracing checks it is a tensor
            outputs.append(("tensor", tensors))
            tensors += 1
        elif _expr(value) is not None:
            if not _expr(value).free_symbols <= set(symbols):
                raise UnsupportedGraph(f"result {item} is a size ({_expr(value)}) not read from any input")
            outputs.append(("sym", _expr(value)))
        elif isinstance(value, (torch.SymInt, int, float, bool, type(None))):
            outputs.append(("const", int(value) if isinstance(value, torch.SymInt) else value))
        else:
            raise UnsupportedGraph(f"result {item} is a {type(value).__name__}; only tensors and numbers are handled")
    return outputs, output_type, hidden


def _fake(node):
    value = node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def _storage(value):
    return StorageWeakRef(value.untyped_storage())


def _owns_its_memory(value):
    """Whether a tensor is all of its storage, contiguous from its start, at every size its dynamic dims may take: a
    new tensor, which an engine's copy can stand for. Asked without guards: a guard on a dim the user marked dynamic
    (x[:, :-2] is all of its storage only where that dim is 2) fails dynamo's compile."""
    return statically_known_true(value.storage_offset() == 0) and \
        statically_known_true(value.untyped_storage().nbytes() == value.numel() * value.element_size()) and \
        _contiguous(value)


def _contiguous(value):
    """Whether the tensor's strides are its sizes' row-major ones (any stride for a dim of size 1), at every size."""
    expected = 1
    for size, stride in reversed(list(zip(value.shape, value.stride()))):
        if not (statically_known_true(size == 1) or statically_known_true(stride == expected)):
            return False
        expected = expected * size
    return True


def _shared_bases(gm, flat, placeholders):
    """The nodes making the memory that two or more results view when no result or argument is all of it (y.t() and
    y[0] of an intermediate y): returned too, so that those results are made again as views of one tensor, and a
    write through one after a graph break reaches the other, as in eager."""
    kept = {_storage(_fake(n)) for n in [*placeholders, *flat]
            if _fake(n) is not None and (n.op == "placeholder" or _owns_its_memory(_fake(n)))}
    viewers = {}
    for node in flat:
        if _fake(node) is not None and _storage(_fake(node)) not in kept:
            viewers.setdefault(_storage(_fake(node)), []).append(node)
    shared = {key for key, nodes in viewers.items() if len(nodes) > 1}
    bases = {}
    for node in gm.graph.nodes:
        value = _fake(node)
        if value is not None and _storage(value) in shared and _owns_its_memory(value):
            bases.setdefault(_storage(value), node)
    return list(bases.values())


def _views(flat, placeholders, symbols):
    """{result index: View} for each result that views an argument's memory, or that of another result which owns
    all of its memory (a new tensor, which the engine's copy can stand for); an argument returned as it is stays
    itself."""
    arguments = {_storage(_fake(n)): p for p, n in enumerate(placeholders) if _fake(n) is not None}
    owners = {}
    for index, node in enumerate(flat):
        value = _fake(node)
        if value is not None and _owns_its_memory(value):
            owners.setdefault(_storage(value), index)
    views = {}
    for index, node in enumerate(flat):
        value = _fake(node)
        if value is None or (isinstance(node, torch.fx.Node) and node.op == "placeholder"):
            continue
        key = _storage(value)
        if key in arguments:
            base, of_argument = arguments[key], True
        elif owners.get(key, index) != index:
            base, of_argument = owners[key], False
        else:
            continue
        base_fake = _fake(placeholders[base]) if of_argument else _fake(flat[base])
        if base_fake.dtype != value.dtype:
            continue  # a view as another dtype: as_strided cannot make it, the engine's copy stands for it
        layout = tuple(_layout_part(d, symbols) for d in value.shape), \
            tuple(_layout_part(d, symbols) for d in value.stride()), \
            _layout_part(value.storage_offset() - base_fake.storage_offset(), symbols)
        views[index] = View(base, of_argument, *layout)
    return views


def _layout_part(value, symbols):
    """A size, stride or offset as an int, or as a sympy expression of the input sizes."""
    expr = _expr(value)
    if expr is None:
        return int(value)
    if not expr.free_symbols <= set(symbols):
        raise UnsupportedGraph(f"a result views another's memory with a layout ({expr}) not read from any input")
    return expr
