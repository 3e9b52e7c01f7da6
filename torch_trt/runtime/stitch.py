"""Replace an engine segment's nodes in the graph by one call of torch_trt::execute_engine.

The segment's nodes must be contiguous (partitioning makes them so): the call goes after the
last one, so no node between the first and the last may read the segment's outputs. Segment
inputs with an `input_casts` dtype are cast before the call (checked: torch_trt::cast_input), outputs with an
`output_casts` dtype after it (truncate_long_and_double: int64/float64 narrowed for the engine, restored for PyTorch).

`check_inputs_no_engine_receives` checks the module inputs no engine call receives against their Input specs: the
graph was compiled for those shapes (its sizes folded where they are static), and an engine checks only its own
inputs.
"""

import torch

from ..lowering.rewrite import insert_int_list
from .engine_manager import engine_id, hashed


def stitch_engine(graph, segment, engine_bytes, target, device):
    """Insert the execute_engine call after the segment's last node, reroute its outputs, delete its nodes."""
    engine_tensor, identifier = _as_tensor(engine_bytes), engine_id(engine_bytes)
    hashed(engine_tensor, identifier)
    with graph.insert_point_guard(segment.nodes[0]):
        engine = graph.insertConstant(engine_tensor)
        settings = [graph.insertConstant(s) for s in (identifier, target, str(device))]
    last = segment.nodes[-1]
    inputs = []
    for value, expected, dtype in zip(segment.inputs, segment.input_dtypes,
                                      segment.input_casts or [None] * len(segment.inputs)):
        if dtype is not None:
            value, last = _checked_cast_after(graph, value, expected, dtype, last)
        inputs.append(value)
    packed = graph.create("prim::ListConstruct", inputs)
    packed.output().setType(torch._C.ListType.ofTensors())
    call = graph.create("torch_trt::execute_engine", [packed.output(), engine] + settings)
    call.output().setType(torch._C.ListType.ofTensors())
    unpack = graph.create("prim::ListUnpack", [call.output()], len(segment.outputs))
    packed.insertAfter(last)
    call.insertAfter(packed)
    unpack.insertAfter(call)
    last = unpack
    output_casts = segment.output_casts or [None] * len(segment.outputs)
    for old, new, dtype in zip(segment.outputs, unpack.outputs(), output_casts):
        new.setType(old.type())
        if dtype is not None:
            new, last = _cast_after(graph, new, dtype, last)
        old.replaceAllUsesWith(new)
    for node in reversed(segment.nodes):
        node.destroy()
    return call


def check_inputs_no_engine_receives(graph, specs):
    """At the start of `graph` (a module's forward: its first input is the module), a torch_trt::check_input of each
    tensor input that no engine call receives itself (or cast by torch_trt::cast_input)."""
    received = {value.unique() for call in graph.findAllNodes("torch_trt::execute_engine")
                for value in call.inputsAt(0).node().inputs()}
    received |= {cast.inputsAt(0).unique() for cast in graph.findAllNodes("torch_trt::cast_input")
                 if cast.output().unique() in received}
    first = next(iter(graph.nodes()), graph.return_node())
    for value, spec in zip(list(graph.inputs())[1:], specs):
        if value.unique() in received:
            continue
        with graph.insert_point_guard(first):
            shapes = [insert_int_list(graph, shape) for shape in (spec.min_shape, spec.max_shape)]
            arguments = shapes + [graph.insertConstant(spec.dtype), graph.insertConstant(value.debugName())]
            graph.insertNode(graph.create("torch_trt::check_input", [value] + arguments, 0))


def _as_tensor(engine_bytes):
    """The engine as a uint8 tensor sharing its memory where that is writable (torch views no read-only memory)."""
    writable = not memoryview(engine_bytes).readonly
    return torch.frombuffer(engine_bytes if writable else bytearray(engine_bytes), dtype=torch.uint8)


def _checked_cast_after(graph, value, expected, dtype, after):
    """`torch_trt::cast_input(value, expected, dtype)` after `after` (a plain cast would take an input of any dtype,
    where the engine's own check refuses a wrong one); returns its output and the new node."""
    return op_after(graph, "torch_trt::cast_input", value, (expected, dtype, value.debugName()), after)


def _cast_after(graph, value, dtype, after):
    """`aten::to(value, dtype)` after `after`; returns its output and the new node."""
    return op_after(graph, "aten::to", value, (dtype, False, False, None), after)


def op_after(graph, kind, value, constants, after):
    """`kind(value, *constants)`, a tensor like `value`, inserted after `after`: its output and the new node."""
    with graph.insert_point_guard(after):
        arguments = [graph.insertConstant(c) for c in constants]
    node = graph.create(kind, [value] + arguments)
    node.output().setType(value.type())
    node.insertAfter(after)
    return node.output(), node
