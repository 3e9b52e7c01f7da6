"""ConversionCtx: the state shared by evaluators and converters while one graph becomes a network.

Fields:
    trt                  the target's API module (`tensorrt` or the reference); never import tensorrt
    net                  the INetworkDefinition, behind a proxy that names every layer after the
                         node being converted and turns a refused `add_*` (None) into an error; the
                         only handle to the network (the builder alone takes `net.definition`)
    settings             the CompileSettings
    value_tensor_map     torch Value -> ITensor, for runtime values
    runtime_scalars      id(ITensor) -> the Python number type of the int, float or bool Value it holds
    evaluated_value_map  torch Value -> compile-time value (int, list, tensor, None, ...)
    weights              host arrays (and bfloat16 tensors) handed to the network, kept alive until the build ends
    layer_nodes          layer name -> the node it was converted from, to name the nodes a failed build refused
    errors               the errors the builder's IErrorRecorder kept, the network's among them (network_errors())

Call tree (interpreter.convert_graph):
    convert_graph
      ├─ add_input for each graph input          -> value_tensor_map
      ├─ for node in graph: convert_node
      │     ├─ Args(ctx, node) from both maps
      │     ├─ converter(ctx, node, args)  -> ctx.set_output(node, layer | tensors)
      │     └─ or evaluator(ctx, node, args) -> evaluated_value_map
      └─ mark_output for each graph output
"""

import re

import numpy as np
import torch

from ..targets.dtypes import trt_dtype
from ..targets.target_logger import error_recorder


class NetworkRefusedError(RuntimeError):
    """The network returned None from an add_* call: TensorRT refused the layer."""


class _NamingNetwork:
    """Proxy of INetworkDefinition: layers are named from the current node; refusals raise."""

    def __init__(self, network, ctx):
        self._network, self._ctx = network, ctx

    @property
    def definition(self):
        """The INetworkDefinition itself, for the builder (which takes no proxy); converters use the proxy."""
        return self._network

    def __getattr__(self, name):
        attribute = getattr(self._network, name)
        if not name.startswith("add_") or name == "add_input":
            return attribute

        def add(*args, **kwargs):
            errors_before = len(self._ctx.errors)
            layer = attribute(*args, **kwargs)
            if layer is None:
                reason = "; ".join(self._ctx.errors[errors_before:]) or "no reason logged"
                raise NetworkRefusedError(f"{name} was refused: {reason}")
            self._ctx.name_layer(layer)
            return layer

        return add


class ConversionCtx:
    """See the module docstring for the fields and the call tree."""

    def __init__(self, trt, builder, settings):
        self.trt, self.settings = trt, settings
        builder.error_recorder = error_recorder(trt)  # the network created below inherits it
        self.errors = builder.error_recorder.errors
        self._errors_before_network = len(self.errors)
        self.net = _NamingNetwork(builder.create_network(_creation_flags(trt)), self)
        self.value_tensor_map, self.evaluated_value_map = {}, {}
        self.runtime_scalars = {}  # id(ITensor) -> int, float or bool: the Python type of the runtime number it holds
        self.weights = []
        self.layer_nodes = {}
        self.node = None
        self._layer_count = 0

    def network_errors(self):
        """The errors the target reported since this network was created (setters report misuse, the build fails
        later)."""
        return self.errors[self._errors_before_network:]

    def name_layer(self, layer):
        """Name a new layer `<kind>/<first output's debug name>[/n]` after the node being converted."""
        self._layer_count += 1
        base = f"{self.node.kind()}/{self.node.outputsAt(0).debugName()}" if self.node is not None else "torch_trt"
        layer.name = f"{base}/{self._layer_count}"
        if self.node is not None:
            self.layer_nodes[layer.name] = self.node

    def nodes_named_in(self, messages):
        """The nodes whose layers `messages` name (a builder's errors name the layer they refuse)."""
        text = "\n".join(messages)
        return [node for name, node in self.layer_nodes.items() if re.search(re.escape(name) + r"(?!\d)", text)]

    def set_output(self, node, outputs):
        """Map the node's outputs to a layer's outputs (or given ITensors), naming them after the Values."""
        if isinstance(outputs, (list, tuple)):
            tensors = list(outputs)
        elif isinstance(outputs, self.trt.ITensor):
            tensors = [outputs]
        else:
            tensors = [outputs.get_output(i) for i in range(node.outputsSize())]
        if len(tensors) != node.outputsSize():
            raise ValueError(f"converter produced {len(tensors)} outputs, the node has {node.outputsSize()}")
        for value, tensor in zip(node.outputs(), tensors):
            if not tensor.is_network_input:
                tensor.name = value.debugName()
            self.map_tensor(value, tensor)
        return tensors[0] if len(tensors) == 1 else tensors

    def map_tensor(self, value, tensor):
        """Record that the ITensor `tensor` holds the runtime Value `value` (a number, such as a dynamic size, is one
        to type promotion, not a 0-d tensor)."""
        self.value_tensor_map[value] = tensor
        if value.type().kind() in _NUMBER_KINDS:
            self.runtime_scalars[id(tensor)] = _NUMBER_KINDS[value.type().kind()]

    def constant(self, value):
        """An ITensor holding a compile-time tensor (float64 -> float32; bool and uint8 through a cast; bfloat16 from
        the tensor's memory)."""
        # contiguous where the tensor lives: a GPU lays out a transposed weight in microseconds, the host in milliseconds
        value = torch.as_tensor(value).detach().contiguous().cpu()
        if value.dtype == torch.float64:
            value = value.float()
        if value.numel() == 0:  # add_constant refuses zero-volume weights: slice a one-element placeholder empty
            placeholder = self.constant(torch.zeros((1,) * value.dim(), dtype=value.dtype))
            rank = value.dim()
            return self.net.add_slice(placeholder, (0,) * rank, tuple(value.shape), (0,) * rank).get_output(0)
        # TensorRT constants take no BOOL/UINT8 weights: cast, UINT8 from FLOAT (UINT8 casts only to and from FLOAT
        # and HALF), which holds 0..255 exactly
        stand_in = {torch.bool: torch.int32, torch.uint8: torch.float32}.get(value.dtype)
        if stand_in is not None:
            layer = self.net.add_cast(self.constant(value.to(stand_in)), trt_dtype(self.trt, value.dtype))
            return layer.get_output(0)
        weights = self.host_weights(value.reshape(value.shape or (1,)))  # a 0-D value is one weight
        return self.net.add_constant(tuple(value.shape), weights).get_output(0)

    def host_weights(self, tensor):
        """Weights for an add_* call holding the contiguous host `tensor`, kept alive until the build ends: a numpy
        array, or for bfloat16, which numpy lacks, Weights that TensorRT reads from the tensor's memory."""
        if tensor.dtype == torch.bfloat16:
            self.weights.append(tensor)
            return self.trt.Weights(trt_dtype(self.trt, tensor.dtype), tensor.data_ptr(), tensor.numel())
        array = tensor.numpy()
        self.weights.append(array)
        return array


_NUMBER_KINDS = {"IntType": int, "FloatType": float, "BoolType": bool}


def _creation_flags(trt):
    """STRONGLY_TYPED on TensorRT 10 (ignored by 11, where every network is strongly typed)."""
    flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
    return 0 if flag is None else 1 << int(flag)

