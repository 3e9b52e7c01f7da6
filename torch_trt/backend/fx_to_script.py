"""FX GraphModule -> frozen TorchScript module of the user inputs, with the baked values as constants.

`trace_frozen(gm, signature, args)` wraps the graph in a module that holds the baked values as
buffers and reads sizes from its inputs, traces it with torch.jit.trace on copies of the real inputs
(aten-level TorchScript; dynamo's graph only calls torch functions on tensors and SymInts, so the
trace records the sizes it uses), refuses graphs that an engine would run wrongly (training-mode
ops, writes into inputs or weights), and freezes it so the buffers become graph constants.
"""

import concurrent.futures
import copy
import hashlib
import warnings

import torch

from .graph_signature import BAKED, INPUT, SIZE, UnsupportedGraph
from .graph_text import tensor_constants
from .torchscript import fold_frozen_convolutions, quiet_torchscript

_TRAINING_ARGS = {"aten::dropout": 2, "aten::feature_dropout": 2, "aten::alpha_dropout": 2,
                  "aten::feature_alpha_dropout": 2, "aten::batch_norm": 5}
_RUNTIME_ASSERTS = {torch.ops.aten._assert_scalar.default, torch.ops.aten.sym_constrain_range_for_size.default,
                    torch.ops.aten.sym_constrain_range.default, torch.ops.aten._assert_async.msg}


def traceable_copy(gm, hidden=()):
    """A copy of the graph for torch.jit.trace, returning after its results the nodes named in `hidden` (the bases of
    results that view them: GraphSignature.hidden): without dynamo's runtime checks on SymInts, which a trace
    cannot record, and with each attention mask whose last dim is broadcast (stride 0) made contiguous. PyTorch's fused
    GPU attention kernels refuse such a mask, and its math path held twice eager's activations while tracing a
    batch-32 BERT-base (transformers builds an expanded all-True mask when compiled, none when eager)."""
    graph = copy.deepcopy(gm.graph)
    if hidden:
        output, named = graph.output_node(), {node.name: node for node in graph.nodes}
        output.args = (type(output.args[0])([*output.args[0], *(named[name] for name in hidden)]),)
    _bool_scalars_as_numbers(graph)
    _fresh_tensor_literals(graph)
    _float_size_arithmetic_in_double(graph)
    for node in reversed(list(graph.nodes)):
        unused_number = not node.users and isinstance(node.meta.get("example_value"), (torch.SymBool, torch.SymInt))
        if node.op == "call_function" and (node.target in _RUNTIME_ASSERTS or unused_number):
            graph.erase_node(node)
        elif node.op == "call_function" and node.target is torch._C._nn.scaled_dot_product_attention:
            _contiguous_mask(graph, node)
    return torch.fx.GraphModule(gm, graph)


def _fresh_tensor_literals(graph):
    """A clone after each tensor the forward makes from Python data (`torch.tensor(0.0)`, `x.new_tensor([...])`).
    The trace records such a tensor as a constant of the graph, so a write into it (`total += ...`) wrote the one
    tensor every call shares, and the trace's own run had written it first; the clone is an op, a tensor of its
    own per call (freezing folds it away where nothing writes). torch.as_tensor of a tensor is that tensor: no clone."""
    for node in list(graph.nodes):
        method = node.op == "call_method" and node.target == "new_tensor"
        literal = method or node.op == "call_function" and node.target in _TENSOR_LITERALS
        nodes_read = []
        if literal and node.args:
            torch.fx.node.map_arg(node.args[1 if method else 0], nodes_read.append)
        if literal and node.users and not nodes_read:
            with graph.inserting_after(node):
                fresh = graph.call_method("clone", (node,))
            node.replace_all_uses_with(fresh, delete_user_cb=lambda user: user is not fresh)
            fresh.meta = dict(node.meta)


_TENSOR_LITERALS = (torch.tensor, torch.as_tensor, torch.scalar_tensor)


def _float_size_arithmetic_in_double(graph):
    """Float arithmetic on dynamic sizes (`x.size(0) * 0.7 + 1.0`, a SymFloat) computed in float64, as Python computes
    it. The trace records a size as an int64 0-d tensor, and an int tensor times a float is a float32 one: the end
    of `arange(1.0, n * 0.7 + 1.0, 0.7)` rounded up past a step, one element more than eager. Float64 stays in
    PyTorch (TensorRT has no float64), where these few scalar ops belong. A result that a float tensor op takes as
    its Scalar (`x * (n / 3)`) is rounded to float32 there, as PyTorch's kernels round it, so that op can still run in
    an engine; arange and its kind compute their length from it, in double."""
    for node in list(graph.nodes):
        if node.op != "call_function" or not isinstance(node.meta.get("example_value"), torch.SymFloat):
            continue
        for size in {arg for arg in node.all_input_nodes if isinstance(arg.meta.get("example_value"), torch.SymInt)}:
            _insert_between(graph, size, node, _traced_in_double)
        for user in list(node.users):
            example = user.meta.get("example_value")
            if isinstance(example, torch.Tensor) and example.dtype in _FLOAT32_OPMATH and user.target not in _RANGES:
                _insert_between(graph, node, user, _traced_in_float32)


_FLOAT32_OPMATH = (torch.float32, torch.float16, torch.bfloat16)  # dtypes whose kernels take a Scalar as float32
_RANGES = (torch.arange, torch.range, torch.linspace, torch.logspace)


def _insert_between(graph, value, user, function):
    """`user` reading function(value) where it read `value`."""
    with graph.inserting_before(user):
        converted = graph.call_function(function, (value,))
    converted.meta = dict(value.meta)
    user.replace_input_with(value, converted)


def _traced_in_double(size):
    """A size as the trace records it, a 0-d tensor, in float64; a static size is a Python int already."""
    return size.double() if isinstance(size, torch.Tensor) else size


def _traced_in_float32(number):
    """A float the trace records as a float64 0-d tensor, in float32; a static one is a Python float already."""
    return number.float() if isinstance(number, torch.Tensor) else number


def _bool_scalars_as_numbers(graph):
    """Each Python bool passed as a Scalar argument (`x * True`, `mask.masked_fill(m, True)`, `torch.full(n, True)`)
    made an int, the result cast back to the dtype dynamo recorded (a bool tensor times 1 is an int64 one).
    TorchScript has no bool Scalar ("number" in its schemas): the trace records a node no schema matches, which
    fails the trace, or the run of that node when it stays in PyTorch; a 0-d bool tensor in its place fails the same
    way once frozen."""
    for node in list(graph.nodes):
        name = node.target if node.op == "call_method" else getattr(node.target, "__name__", None)
        bools = [key for key, value in [*enumerate(node.args), *node.kwargs.items()] if type(value) is bool]
        if node.op not in ("call_function", "call_method") or not isinstance(name, str) or not bools:
            continue
        schemas = _schemas(name)
        scalar_bools = [key for key in bools if any(str(arg.type) == "number" and key in (i, arg.name)
                                                    for schema in schemas for i, arg in enumerate(schema.arguments))]
        for key in scalar_bools:
            if isinstance(key, int):
                node.update_arg(key, int(node.args[key]))
            else:
                node.update_kwarg(key, int(node.kwargs[key]))
        example = node.meta.get("example_value")
        if scalar_bools and isinstance(example, torch.Tensor):
            with graph.inserting_after(node):
                cast = graph.call_method("to", (node, example.dtype))
            node.replace_all_uses_with(cast, delete_user_cb=lambda user: user is not cast)
            cast.meta["example_value"] = example


def _schemas(name):
    """The TorchScript schemas of the op an FX node names: operator.mul, torch.full, or a method ("masked_fill", or
    "__eq__" and "__rmul__", as some PyTorch versions' dynamo records `x == True` and `True * x`)."""
    for candidate in (name, name.strip("_"), name.strip("_").removeprefix("r")):
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + _ATEN_NAMES.get(candidate, candidate))
        if schemas:
            return schemas
    return []


_ATEN_NAMES = {"and_": "__and__", "or_": "__or__", "xor": "__xor__", "truediv": "div", "floordiv": "floor_divide",
               "mod": "remainder"}  # operator's functions, as dynamo's graphs call them


def _contiguous_mask(graph, attention):
    mask = attention.kwargs.get("attn_mask", attention.args[3] if len(attention.args) > 3 else None)
    example = mask.meta.get("example_value") if isinstance(mask, torch.fx.Node) else None
    if isinstance(example, torch.Tensor) and example.dim() and example.stride(-1) != 1:
        with graph.inserting_before(attention):
            contiguous = graph.call_method("contiguous", (mask,))
        contiguous.meta["example_value"] = example.contiguous()
        attention.replace_input_with(mask, contiguous)


class _BakedGraph(torch.nn.Module):
    """The dynamo graph as a function of the user tensors: baked values are buffers, sizes are read from inputs."""

    def __init__(self, gm, signature, args, static_sizes):
        super().__init__()
        self.gm, self.signature = gm, signature
        self.scalars = {}  # position -> a Python value the trace records as a constant
        for position, (kind, ref) in enumerate(signature.args):
            value = args[position]
            if kind == SIZE and static_sizes:
                self.scalars[position] = int(args[signature.input_positions[ref[0]]].shape[ref[1]])
            elif kind == BAKED and isinstance(value, torch.Tensor):
                self.register_buffer(f"baked_{position}", value.detach())
            elif kind == BAKED:
                self.scalars[position] = value

    def forward(self, *inputs):
        args = []
        for position, (kind, ref) in enumerate(self.signature.args):
            if kind == INPUT:
                args.append(inputs[ref])
            elif position in self.scalars:
                args.append(self.scalars[position])
            elif kind == SIZE:
                args.append(inputs[ref[0]].size(ref[1]))
            else:
                args.append(getattr(self, f"baked_{position}"))
        result = self.gm.forward(*args)  # not gm(...), which prints the generated code of a failing line
        flat = result if self.signature.output_type else (result,)
        return tuple(flat[i] for i in self.signature.tensor_outputs)


def trace_frozen(gm, signature, args, static_sizes=False):
    """A frozen ScriptModule of the user tensors of `args`, returning the tensor results; sizes pinned if asked.

    The trace runs the graph once, on copies of the inputs and buffers, so a graph that writes
    into them is refused without side effects; one writing into a parameter, which is not copied, was
    refused before anything ran it (graph_signature.py). It runs outside inference mode, where the
    copies have version counters.
    """
    with torch.inference_mode(False), quiet_torchscript(), warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        args = list(args)
        for position in signature.input_positions + signature.baked_positions:
            if isinstance(args[position], torch.Tensor) and not isinstance(args[position], torch.nn.Parameter):
                args[position] = args[position].detach().clone()
        versions = [(p, tensor_version(args[p])) for p in signature.input_positions + signature.baked_positions
                    if isinstance(args[p], torch.Tensor)]
        inputs = tuple(args[p] for p in signature.input_positions)
        wrapper = _BakedGraph(gm, signature, args, static_sizes).eval()
        try:
            traced = torch.jit.trace(wrapper, inputs, check_trace=False)
        except Exception as error:  # the graph does something TorchScript cannot record
            raise UnsupportedGraph(f"torch.jit.trace failed: {type(error).__name__}: {error}") from error
        _check_inference_only(traced.inlined_graph)
        if any(tensor_version(args[p]) != version for p, version in versions):
            raise UnsupportedGraph("the graph writes into an input, buffer or parameter, which an engine cannot do")
        return _freeze(traced, fold=all(t.device.type == "cpu" for t in inputs))


def _freeze(traced, fold):
    """torch.jit.freeze without concatenating linear layers that share an input (FrozenConcatLinear, on CUDA), and
    folding batch norms, additions and scalings into convolutions only if `fold` (the engines run on the CPU).
    Dropout removal still runs.

    Engines built through torch.compile read the model's weights in place (targets/reference/lending.py), and the
    model keeps its own for as long as it stays compiled: a concatenated or folded weight would be a second copy held
    for the engine's life (the query, key and value weights, 41 MiB of BERT-base's 214 in float16; every kernel of
    ResNet-50, 49 MiB). On a GPU, where memory is scarce, a batch norm stays a per-channel scale, which TensorRT's
    builder fuses into the convolution and the reference's code generation into the convolution's epilogue. On the
    CPU, whose memory is the host's and where the reference runs without generated code by default, folding pays:
    the quickstart's residual CNN runs in 1.04 ms folded, 1.30 ms not (batch 8, 2 cores)."""
    frozen = torch.jit.RecursiveScriptModule(torch._C._freeze_module(traced._c))
    torch.jit.RecursiveScriptModule._finalize_scriptmodule(frozen)
    torch._C._jit_pass_remove_dropout(frozen._c)
    if fold:
        fold_frozen_convolutions(frozen.graph)
    return frozen


def tensor_version(tensor):
    """The tensor's version counter, None for an inference tensor (which has none)."""
    try:
        return tensor._version
    except RuntimeError:
        return None


def _check_inference_only(graph):
    """Refuse graphs with training-mode ops, whose engine would differ from PyTorch: random dropout, a batch norm
    updating running statistics. One with none to update is a function of its input (BiT standardizes its convolution
    weights so)."""
    for node in graph.nodes():
        if node.kind() in _TRAINING_ARGS and node.inputsAt(_TRAINING_ARGS[node.kind()]).toIValue() is not False \
                and not _normalizes_by_its_own_statistics(node):
            raise UnsupportedGraph(f"{node.kind()} runs in training mode; call model.eval() before compiling")


def _normalizes_by_its_own_statistics(node):
    """Whether the node is a batch norm without running statistics: F.batch_norm(x, None, None, training=True)."""
    return node.kind() == "aten::batch_norm" and all(
        isinstance(node.inputsAt(k).type(), torch._C.NoneType) for k in (3, 4))


def constants_digest(graph, known=()):
    """A hash of every tensor constant's dtype, shape and bytes (the weights), one thread per tensor: the copies to
    the host and hashlib release the GIL, and a transformer's weights take most of a second to hash on one core.
    A constant that is one of the `known` tensors (the same memory, shape, strides and dtype) is hashed as its
    position among them, its bytes left to whoever keys them by identity and version."""
    positions = {_layout(t): index for index, t in enumerate(known)}

    def digest(tensor):
        position = positions.get(_layout(tensor))
        return _tensor_digest(tensor) if position is None else f"known {position}".encode()

    with concurrent.futures.ThreadPoolExecutor() as pool:
        digests = list(pool.map(digest, tensor_constants(graph)))
    return hashlib.sha256(b"".join(digests)).hexdigest()[:32]


def _layout(tensor):
    """Where and how a tensor lies in memory: equal for two tensors that are views of the same values."""
    return tensor.device, tensor.data_ptr(), tuple(tensor.shape), tensor.stride(), tensor.dtype


def _tensor_digest(tensor):
    tensor = tensor.detach().cpu().contiguous()
    digest = hashlib.sha256(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
    if tensor.numel():
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
    return digest.digest()
