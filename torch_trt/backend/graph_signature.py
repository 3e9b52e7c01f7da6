"""What each argument and result of a dynamo FX graph is, for the engine that replaces it.

Dynamo calls the compiled graph with its placeholders' values, in order. A user tensor becomes
an engine input. A parameter, a buffer, or a Python number dynamo passes as a tensor or SymInt
is baked into the engine as a constant (each call checks it is unchanged). A SymInt that is a
dim of a user input is recomputed from that input inside the traced graph, so it stays dynamic.
Results are tensors (from the engine), constants, or size expressions evaluated per call.
"""

from dataclasses import dataclass

import sympy
import torch

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
    outputs: list  # ("tensor", index into the traced outputs) | ("const", value) | ("sym", expr)
    output_type: type  # tuple, list, or None for a single result

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
        """The graph's result from the engine outputs, the constants and the sizes of this call's arguments."""
        flat, next_tensor = [], 0
        for kind, value in self.outputs:
            if kind == "tensor":
                flat.append(engine_outputs[next_tensor])
                next_tensor += 1
            else:
                flat.append(value if kind == "const" else int(value.xreplace(self._sizes(args))))
        return flat[0] if self.output_type is None else self.output_type(flat)

    def _sizes(self, args):
        return {s: args[self.input_positions[k]].shape[d] for s, (k, d) in self.symbols.items()}


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
    outputs, output_type = _outputs(gm, symbols)
    fakes = [node.meta.get("example_value") for node in placeholders]
    return GraphSignature(args, input_positions, input_dims, symbols, _shape_env(placeholders), fakes, outputs,
                          output_type)


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


def _outputs(gm, symbols):
    result = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    output_type = type(result) if isinstance(result, (tuple, list)) else None
    flat = list(result) if output_type else [result]
    outputs, tensors = [], 0
    for item in flat:
        value = item.meta.get("example_value", _UNKNOWN) if isinstance(item, torch.fx.Node) else item
        if isinstance(value, torch.Tensor) or value is _UNKNOWN:  # no metadata: tracing checks it is a tensor
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
    return outputs, output_type
