"""INetworkDefinition, ITensor and ILayer: the network records TensorRT builds from.

Layers live in `layers/`, one file per kind; each defines its ILayer subclass (attributes,
`_check` for TensorRT's rules, `_compute` for its semantics in PyTorch) and registers its
`add_*` method here with `@network_method`. A rule violation is logged as an error and the
`add_*` call returns None, as TensorRT does. Shapes are inferred lazily by running `_compute`
on meta tensors; dynamic dims (-1) are found by running it with two probe sizes.
"""

import re

import torch

from .enums import DataType, ErrorCodeTRT, Severity, TensorLocation, member
from .logger import report_error
from .types import TORCH_DTYPE, TRT_DTYPE, Dims, to_dims

_PROBES = (4099, 4111)  # sizes standing in for dynamic dims; a dim that differs between probes is dynamic
# Layer attributes no output shape or dtype depends on: setting one (converters name every layer) keeps them inferred.
_SHAPELESS_ATTRIBUTES = ("name", "metadata")


class NetworkError(Exception):
    """A rule TensorRT enforces was broken; reported through the logger, never raised to converters."""


class DeferredError(NetworkError):
    """A rule that attributes set after add_* (padding, ...) may still satisfy; the build checks it again."""


class ITensor:
    """A tensor of the network: an input, or an output of a layer."""

    _writable = ("name", "shape", "location", "allowed_formats", "broadcast_across_batch")

    def __init__(self, network, name, producer=None, index=0, dtype=None, shape=None):
        self._network, self._name, self._producer, self._index = network, name, producer, index
        self._dtype, self._shape = dtype, shape
        self.location = TensorLocation.DEVICE
        self.allowed_formats = 1
        self.broadcast_across_batch = False
        self._dimension_names = {}

    def __setattr__(self, key, value):
        # Bound objects have no __dict__: TensorRT 11 refuses e.g. dynamic_range (weak typing, 10.x only).
        if not key.startswith("_") and key not in self._writable:
            raise AttributeError(f"'ITensor' object has no writable attribute '{key}'")
        object.__setattr__(self, key, value)

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        self._name = str(value)

    @property
    def shape(self):
        if self._producer is None:
            return self._shape
        a, b = self._network._meta(self)
        return Dims(-1 if x != y else x for x, y in zip(a.shape, b.shape))

    @shape.setter
    def shape(self, value):
        if self._producer is not None:
            raise RuntimeError("ITensor.shape can only be set on network inputs")
        self._shape = to_dims(value, "ITensor.shape")
        self._network._changed(None)

    @property
    def dtype(self):
        return self._dtype if self._producer is None else TRT_DTYPE[self._network._meta(self)[0].dtype]

    @property
    def is_network_input(self):
        return self._producer is None

    @property
    def is_network_output(self):
        return any(t is self for t in self._network._outputs)

    @property
    def is_shape_tensor(self):
        return False

    @property
    def is_execution_tensor(self):
        return True

    def set_dimension_name(self, index, name):
        self._dimension_names[index] = name

    def get_dimension_name(self, index):
        return self._dimension_names.get(index)

    def __repr__(self):
        return f"<ITensor {self._name!r}>"


class ILayer:
    """Base of every layer: inputs, outputs, name; public attributes are those TensorRT binds."""

    _layer_type = None
    _attributes = ()          # read/write attributes of the concrete layer, as bound in TensorRT
    _weight_attributes = ()   # attributes holding Weights (serialized as tensors, not JSON)
    _num_outputs = 1
    _broadcasts = False       # whether its inputs broadcast against each other (dim by dim, equal ranks)

    def __init__(self, network, inputs):
        object.__setattr__(self, "_network", network)
        object.__setattr__(self, "_inputs", list(inputs))
        object.__setattr__(self, "name", f"(Unnamed Layer* {network.num_layers}) [{self._layer_type.name.title()}]")
        object.__setattr__(self, "metadata", "")
        outputs = [ITensor(network, f"{self.name}_output_{i}", self, i) for i in range(self._num_outputs)]
        object.__setattr__(self, "_outputs", outputs)

    def __setattr__(self, key, value):
        if not key.startswith("_") and key not in ("name", "metadata", "num_ranks") + self._attributes:
            raise AttributeError(f"'{type(self).__name__}' object has no writable attribute '{key}'")
        current = self.__dict__.get(key)
        if hasattr(type(current), "__members__"):  # an enum attribute takes members of its enum only
            member(type(current), value, f"{type(self).__name__}.{key.lstrip('_')}")
        object.__setattr__(self, key, value)
        network = self.__dict__.get("_network")  # restored engine layers have none
        if network is not None and key not in _SHAPELESS_ATTRIBUTES:
            network._changed(self)

    @property
    def type(self):
        return self._layer_type

    @property
    def num_inputs(self):
        return len(self._inputs)

    @property
    def num_outputs(self):
        return len(self._outputs)

    def get_input(self, index):
        return self._inputs[index] if 0 <= index < len(self._inputs) else None

    def set_input(self, index, tensor):
        if not isinstance(tensor, ITensor) or tensor._network is not self._network:
            self._network._log(Severity.ERROR, f"{self.name}: set_input({index}) needs a tensor of this network")
            return
        while len(self._inputs) <= index:
            self._inputs.append(None)
        self._inputs[index] = tensor
        self._network._changed(self)

    def get_output(self, index):
        return self._outputs[index] if 0 <= index < len(self._outputs) else None

    def get_output_type(self, index):
        return self._outputs[index].dtype

    def _check(self, inputs):
        """Raise NetworkError when the (meta) inputs break one of TensorRT's rules for this layer."""

    def _check_built(self, inputs):
        """Rules only the builder checks, on values no shape depends on (e.g. constant gather indices).

        Rules on attributes converters set after add_* (num_groups, axis, mode) go in _check with check_deferred."""

    def _check_at_run(self, inputs):
        """Rules on shape-tensor values (an assertion's condition), which need the input shapes: the engine checks
        them at each new set, on meta inputs that know their values, the builder where no dynamic dim reaches them."""

    def _compute(self, inputs, weights):
        """The layer's semantics: input tensors (and weight tensors by attribute) -> output tensor(s)."""
        raise NotImplementedError


class INetworkDefinition:
    """The network being defined: inputs, layers in insertion order, marked outputs."""

    def __init__(self, builder, flags):
        self._builder, self._flags = builder, flags
        self._inputs, self._layers, self._outputs = [], [], []
        self._meta_cache = {}
        self._inferred_from = {}  # id(layer) -> the input metas its cached outputs were inferred from
        self.name = "Unnamed Network 0"
        self.error_recorder = builder.error_recorder

    builder = property(lambda self: self._builder)
    flags = property(lambda self: self._flags)
    num_layers = property(lambda self: len(self._layers))
    num_inputs = property(lambda self: len(self._inputs))
    num_outputs = property(lambda self: len(self._outputs))
    has_implicit_batch_dimension = property(lambda self: False)

    def __len__(self):
        return len(self._layers)

    def __getitem__(self, index):
        return self._layers[index]

    def get_layer(self, index):
        return self._layers[index] if 0 <= index < len(self._layers) else None

    def get_input(self, index):
        return self._inputs[index] if 0 <= index < len(self._inputs) else None

    def get_output(self, index):
        return self._outputs[index] if 0 <= index < len(self._outputs) else None

    def get_flag(self, flag):
        return bool(self._flags & (1 << int(flag)))

    def add_input(self, name, dtype, shape):
        if any(t.name == name for t in self._inputs):
            self._log(Severity.ERROR, f"add_input: an input named '{name}' already exists")
            return None
        if not isinstance(dtype, DataType) or dtype not in TORCH_DTYPE:
            self._log(Severity.ERROR, f"add_input: unsupported dtype {dtype!r} for input '{name}'")
            return None
        tensor = ITensor(self, name, dtype=dtype, shape=to_dims(shape, "add_input"))
        self._inputs.append(tensor)
        return tensor

    def mark_output(self, tensor):
        if not isinstance(tensor, ITensor) or tensor._network is not self:
            self._log(Severity.ERROR, "mark_output: the tensor does not belong to this network")
            return
        if not any(t is tensor for t in self._outputs):
            self._outputs.append(tensor)

    def unmark_output(self, tensor):
        self._outputs = [t for t in self._outputs if t is not tensor]

    def _changed(self, layer):
        """Forget inferred shapes: of `layer`'s outputs (consumers are re-checked at build), or all for None."""
        if layer is None:
            self._meta_cache.clear()
        else:
            for output in layer._outputs:
                self._meta_cache.pop(id(output), None)

    def _log(self, severity, message):
        if severity == Severity.ERROR:  # API misuse: TensorRT reports it as an invalid argument
            report_error(self.error_recorder, self._builder.logger, ErrorCodeTRT.INVALID_ARGUMENT, message)
        else:
            self._builder.logger.log(severity, message)

    def _add(self, layer_cls, inputs, **attributes):
        """Create a layer, check TensorRT's rules on it, append it; log and return None on a violation."""
        for tensor in inputs:
            if tensor is not None and (not isinstance(tensor, ITensor) or tensor._network is not self):
                self._log(Severity.ERROR, f"{layer_cls.__name__}: an input tensor is not a tensor of this network")
                return None
        layer = layer_cls(self, inputs)
        for key, value in attributes.items():
            object.__setattr__(layer, key, value)
        self._layers.append(layer)
        try:
            for output in layer._outputs:
                self._meta(output)
            if not layer._outputs:  # an assertion: no output's inference checks it
                self._infer(layer)
        except DeferredError:
            pass  # shapes are inferred again once the converter has set the remaining attributes
        except NetworkError as error:
            self._layers.pop()
            self._log(Severity.ERROR, f"{layer_cls.__name__}: {error}")
            return None
        return layer

    def _meta(self, tensor):
        """(probe_a, probe_b) meta tensors standing for `tensor`, inferred through its producers (one tensor twice where
        nothing dynamic reaches it)."""
        key = id(tensor)
        if key not in self._meta_cache:
            if tensor._producer is None:
                probes = _PROBES if -1 in tensor._shape else _PROBES[:1]  # a static shape: one stands for both
                metas = [torch.empty([probe if d == -1 else d for d in tensor._shape], dtype=TORCH_DTYPE[tensor._dtype],
                                     device="meta") for probe in probes]
                self._meta_cache[key] = (metas[0], metas[-1])
            else:
                for layer in dependency_order([tensor._producer], skip=self._is_inferred):
                    self._infer(layer)
        return self._meta_cache[key]

    def _is_inferred(self, layer):
        return all(id(output) in self._meta_cache for output in layer._outputs)

    def _reinfer_stale(self):
        """Infer again, in dependency order, each layer that changed or whose input metas changed since it was last
        inferred (the builder's final check): every other layer would infer the same outputs from the same metas."""
        for layer in dependency_order(self._layers):
            inputs = [None if t is None else self._meta(t) for t in layer._inputs]
            inferred_from = self._inferred_from.get(id(layer), ())
            same_inputs = len(inputs) == len(inferred_from) and all(a is b for a, b in zip(inputs, inferred_from))
            if not (same_inputs and self._is_inferred(layer)):
                self._infer(layer)

    def _infer(self, layer):
        inputs = [None if t is None else self._meta_cache.get(id(t)) or self._meta(t) for t in layer._inputs]
        static = all(pair is None or pair[0] is pair[1] for pair in inputs)  # both probes the same: infer once
        probed = _dynamic_dims_met(inputs) if layer._broadcasts and not static else inputs
        results = []
        for probe in range(1 if static else 2):
            probe_inputs = [None if pair is None else pair[probe] for pair in probed]
            weights = _meta_weights_of(layer)
            try:
                layer._check(probe_inputs)
                outputs = layer._compute(probe_inputs, weights)
            except (NetworkError, RuntimeError, ValueError, IndexError) as error:
                message = re.sub(rf"\b({_PROBES[0]}|{_PROBES[1]})\b", "-1", str(error).splitlines()[0])
                raise (DeferredError if isinstance(error, DeferredError) else NetworkError)(message) from None
            results.append(outputs if isinstance(outputs, (tuple, list)) else (outputs,))
        for output, a, b in zip(layer._outputs, results[0], results[-1]):
            self._meta_cache[id(output)] = (a, b)
        self._inferred_from[id(layer)] = inputs

    def _check_static_dims_at(self, shapes):
        """Raise a NetworkError naming the first layer with an output dim inferred static (the same at both probes)
        that has another size when the inputs have `shapes` (a profile's min, opt or max shapes, by input name).
        Every dynamic dim takes the same probe size, so a size computed from two of them can come out equal at both
        probes (x[:, y.size(1):] is 0 wide), and one clamped to a constant below the probes reads as that constant
        (x[:, :4] of a dim that may be 2 wide), where TensorRT's symbolic shapes keep it dynamic, and a converter may
        have built on it (y * y.size(1) multiplied by 0). An engine output no layer reads is left alone: its values
        come from the run-time sizes. So are layers that do not run at these shapes: the engine checks those when it
        runs."""
        read = {id(t) for layer in self._layers for t in layer._inputs if t is not None}
        unread_outputs = {id(t) for t in self._outputs} - read
        metas = {id(t): torch.empty(shapes[t.name], dtype=TORCH_DTYPE[t._dtype], device="meta") for t in self._inputs}
        for layer in dependency_order(self._layers):
            if any(t is not None and id(t) not in metas for t in layer._inputs):
                continue
            weights = _meta_weights_of(layer)
            try:
                outputs = layer._compute([None if t is None else metas[id(t)] for t in layer._inputs], weights)
            except (NetworkError, RuntimeError, ValueError, IndexError):
                continue
            for output, meta in zip(layer._outputs, outputs if isinstance(outputs, (tuple, list)) else (outputs,)):
                metas[id(output)] = meta
                inferred = tuple(output.shape)
                wrong = any(d != -1 and d != size for d, size in zip(inferred, meta.shape))
                if wrong and id(output) not in unread_outputs:
                    raise NetworkError(f"{layer.name}: its output's shape was inferred as {inferred} while the "
                                       f"network was built, but is {tuple(meta.shape)} at the inputs' profile shapes "
                                       f"{shapes}: a dim that varies with the inputs' shapes was taken for a static one")


def _dynamic_dims_met(pairs):
    """The (probe_a, probe_b) metas of a broadcasting layer's inputs, each dynamic dim (one whose probes differ) made
    the size it meets: a dynamic dim is unknown when the network is built, so TensorRT checks that it broadcasts only
    when the engine runs. A static size other than 1 at that dim wins, else the first dynamic input's probes (the
    output's dim stays dynamic)."""
    present = [pair for pair in pairs if pair is not None]
    if len({pair[0].dim() for pair in present}) != 1:
        return pairs  # ranks differ: the layer's check refuses that
    shapes = {id(pair): [list(pair[0].shape), list(pair[1].shape)] for pair in present}
    for dim in range(present[0][0].dim()):
        sizes = [shapes[id(pair)] for pair in present]
        dynamic = [a[dim] != b[dim] for a, b in sizes]
        static = {a[dim] for (a, _), known in zip(sizes, dynamic) if not known and a[dim] != 1}
        if not any(dynamic) or len(static) > 1:
            continue  # nothing to meet, or static sizes that cannot: the layer's check says so
        first = sizes[dynamic.index(True)]
        met = (next(iter(static)),) * 2 if static else (first[0][dim], first[1][dim])
        for size, known in zip(sizes, dynamic):
            if known:
                size[0][dim], size[1][dim] = met
    return [pair if pair is None or [list(pair[0].shape), list(pair[1].shape)] == shapes[id(pair)] else
            tuple(torch.empty(shape, dtype=meta.dtype, device="meta") for meta, shape in zip(pair, shapes[id(pair)]))
            for pair in pairs]


def dependency_order(layers, skip=lambda layer: False):
    """`layers` and their producers, each after the producers of its inputs; iterative for deep networks."""
    ordered, placed = [], set()
    for root in layers:
        stack = [(root, False)]
        while stack:
            layer, inputs_placed = stack.pop()
            if id(layer) in placed or skip(layer):
                continue
            if inputs_placed:
                placed.add(id(layer))
                ordered.append(layer)
                continue
            stack.append((layer, True))
            stack.extend((t._producer, False) for t in layer._inputs if t is not None and t._producer is not None)
    return ordered


def _meta_weights_of(layer):
    return {name: meta_weights(getattr(layer, name)) for name in layer._weight_attributes}


def meta_weights(weights):
    """A meta tensor standing for Weights (None when empty), for shape inference."""
    if weights is None or weights.size == 0:
        return None
    return torch.empty(weights.size, dtype=TORCH_DTYPE[weights.dtype], device="meta")


def network_method(function):
    """Register an `add_*` function of a layer module as a method of INetworkDefinition."""
    setattr(INetworkDefinition, function.__name__, function)
    return function


# TensorRT takes UINT8 only as network IO converted by a cast to or from FLOAT/HALF (NvInferRuntimeBase.h, kUINT8).
UINT8_ONLY_CAST = ("TensorRT accepts UINT8 only as network IO cast to or from FLOAT/HALF; cast it at the engine "
                   "boundary or add a cast first")


def check(condition, message):
    """Raise NetworkError(message) unless condition holds: the shared form of TensorRT's rules."""
    if not condition:
        raise NetworkError(message)


def check_deferred(condition, message):
    """Like check, for rules on attributes converters set after add_*: add_* accepts, the build refuses."""
    if not condition:
        raise DeferredError(message)
