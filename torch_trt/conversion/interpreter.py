"""Walk a graph's nodes and turn them into a network: evaluators for static values, converters for tensors.

Any failure is re-raised as ConversionError naming the node, its schema and source location,
in the style of torch.fx's Interpreter.
"""

import logging

import torch

from ..errors import ConversionError, TorchTRTError
from ..targets.dtypes import trt_dtype
from .args import Arg, Args
from .registry import find_converter, find_evaluator, node_schema

logger = logging.getLogger(__name__)

def node_args(ctx, node):
    """Bind the node's inputs to its schema's argument names, taking each from the network or the evaluated values."""
    schema_names = _argument_names(node)
    args = []
    for index, value in enumerate(node.inputs()):
        name = schema_names[index] if index < len(schema_names) else f"input{index}"
        if value in ctx.value_tensor_map:
            args.append(Arg(ctx, name, ctx.value_tensor_map[value], True))
        elif value in ctx.evaluated_value_map:
            args.append(Arg(ctx, name, ctx.evaluated_value_map[value], False))
        else:
            raise ConversionError(node, f"input %{value.debugName()} was neither converted nor evaluated")
    return Args(ctx, args)


def _argument_names(node):
    schema = node_schema(node)
    return [] if schema is None else [a.name for a in schema.arguments]


def convert_node(ctx, node):
    """Run the node's converter (or evaluator) and record its outputs."""
    registration = find_converter(node)
    is_converter = registration is not None
    registration = registration or find_evaluator(node)
    if registration is None:
        raise ConversionError(node, "no converter or evaluator is registered for this schema")
    ctx.node = node
    try:
        result = registration.function(ctx, node, node_args(ctx, node))
        if is_converter:
            _read_output_shapes(ctx, node)
    except TorchTRTError:
        raise
    except Exception as error:
        raise ConversionError(node, f"{type(error).__name__}: {error}") from error
    if not is_converter:
        outputs = list(node.outputs())
        values = [result] if len(outputs) == 1 else list(result)
        for value, evaluated in zip(outputs, values):  # an ITensor taken out of a Tensor[] is a runtime tensor
            if isinstance(evaluated, ctx.trt.ITensor):
                ctx.map_tensor(value, evaluated)
            else:
                ctx.evaluated_value_map[value] = evaluated
    missing = [v.debugName() for v in node.outputs()
               if v not in ctx.value_tensor_map and v not in ctx.evaluated_value_map]
    if missing:
        raise ConversionError(node, f"the converter left output(s) {missing} without a tensor or value")
    logger.debug("converted %s -> %s", node.kind(), [v.debugName() for v in node.outputs()])


def _read_output_shapes(ctx, node):
    """Read the shapes of the tensors the converter made: the network checks a layer's rules when its shapes are
    read (TensorRT's setters report at once), so a rule its layers break is this node's, not its next reader's."""
    for value in node.outputs():
        tensor = ctx.value_tensor_map.get(value)
        if tensor is not None:
            tensor.shape  # noqa: B018  (read for its check)


def convert_graph(ctx, graph, input_specs):
    """Add the graph's inputs (named input_i), convert every node, mark its outputs (named output_i; an INT8 one
    as INT32, which partitioning casts back: partitioning/boundary.py)."""
    for index, (value, spec) in enumerate(zip(graph.inputs(), input_specs)):
        ctx.value_tensor_map[value] = ctx.net.add_input(f"input_{index}", trt_dtype(ctx.trt, spec.dtype),
                                                        spec.shape)
    for node in graph.nodes():
        convert_node(ctx, node)
    ctx.node = None
    marked = []
    for index, value in enumerate(graph.outputs()):
        try:
            marked.append(_mark_output(ctx, value, index, marked))
        except TorchTRTError:
            raise
        except Exception as error:  # a rule of the network the value's converter broke, checked when it is read
            raise ConversionError(value.node(), f"{type(error).__name__}: {error}") from error


def _mark_output(ctx, value, index, marked):
    """Mark the tensor of graph output `value` as network output `output_<index>`; return the tensor marked."""
    tensor = ctx.value_tensor_map.get(value)
    if tensor is None:
        evaluated = ctx.evaluated_value_map.get(value)
        if not isinstance(evaluated, torch.Tensor):
            raise TorchTRTError(f"graph output %{value.debugName()} is {evaluated!r}, not a tensor; only tensors "
                                "can leave an engine")
        tensor = ctx.constant(evaluated)
    if tensor.dtype == ctx.trt.DataType.INT8:  # INT8 IO needs Q/DQ: it leaves as INT32, cast back after the call
        tensor = ctx.net.add_cast(tensor, ctx.trt.DataType.INT32).get_output(0)
    if tensor.is_network_input or any(tensor is other for other in marked):
        tensor = ctx.net.add_identity(tensor).get_output(0)  # an IO tensor cannot be both, or marked twice
    tensor.name = f"output_{index}"
    ctx.net.mark_output(tensor)
    return tensor
