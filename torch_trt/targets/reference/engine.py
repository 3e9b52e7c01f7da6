"""Runtime, ICudaEngine, IExecutionContext: run a reference plan over raw tensor addresses.

The context follows TensorRT's protocol: set_input_shape and set_tensor_address for each IO
tensor, get_tensor_shape to size outputs, execute_async_v3 on a stream. Tensors are rebuilt
from addresses through __cuda_array_interface__ (device) or __array_interface__ (host), so the
caller's code is exactly what real TensorRT runs. IO tensors located on HOST make a CPU engine.
"""

import numpy as np
import torch

from . import plan as plan_format
from .enums import DataType, ErrorCodeTRT, TensorIOMode, TensorLocation
from .logger import report_error
from .layers import LAYER_CLASSES
from .lending import device_weights
from .network import NetworkError
from .program import build_program, compile_program
from .types import TORCH_DTYPE, Dims


class Runtime:
    """Deserializes plans into engines."""

    def __init__(self, logger):
        self._logger = logger
        self.error_recorder = None

    logger = property(lambda self: self._logger)

    def deserialize_cuda_engine(self, serialized_engine):
        try:
            engine = ICudaEngine(*plan_format.deserialize(serialized_engine), self._logger)
        except plan_format.PlanError as error:
            report_error(self.error_recorder, self._logger, ErrorCodeTRT.INVALID_ARGUMENT,
                         f"deserialize_cuda_engine: {error}")
            return None
        engine.error_recorder = self.error_recorder
        return engine


class ICudaEngine:
    """A deserialized plan: IO metadata, profiles, and its layers compiled into one program (program.py)."""

    def __init__(self, plan, tensors, logger):
        self._logger = logger
        self.error_recorder = None
        self._io = {entry["name"]: entry for entry in plan["io"]}
        self._io_names = [entry["name"] for entry in plan["io"]]
        # read on every call (the runtime's per-call path), so looked up once here
        self._modes = {name: getattr(TensorIOMode, entry["mode"]) for name, entry in self._io.items()}
        self._torch_dtypes = {name: TORCH_DTYPE[getattr(DataType, entry["dtype"])] for name, entry in self._io.items()}
        self._profiles = plan["profiles"]
        self._static = all(-1 not in entry["shape"] for entry in plan["io"])
        self._layers = [plan_format.restore_layer(LAYER_CLASSES, record, tensors) for record in plan["layers"]]
        self._records = plan["layers"]
        on_host = any(entry["location"] == "HOST" for entry in plan["io"])
        self._device = torch.device("cpu" if on_host else "cuda")
        placed = device_weights(tensors, self._device)  # lent tensors where they equal a weight (lending.py)
        weights = [{name: placed[key] for name, key in record["weights"].items()} for record in self._records]
        self._name = plan["name"]
        self._inputs = [n for n in self._io_names if self._io[n]["mode"] == "INPUT"]
        self._outputs = [n for n in self._io_names if self._io[n]["mode"] == "OUTPUT"]
        self._module = build_program(self._layers, self._records, weights, self._inputs, self._outputs, self._device)
        # The program holds the device weights it reads (folded ones are gone); shape inference needs only metadata.
        self._weights = [{name: w.to("meta") for name, w in layer_weights.items()} for layer_weights in weights]
        self._program = compile_program(self._module, plan.get("optimization_level", 3), self._device,
                                        plan.get("tf32", True))

    name = property(lambda self: self._name)
    num_io_tensors = property(lambda self: len(self._io_names))
    num_layers = property(lambda self: len(self._layers))
    num_optimization_profiles = property(lambda self: len(self._profiles))

    def __getitem__(self, index):
        return self._io_names[index]

    def get_tensor_name(self, index):
        return self._io_names[index]

    def get_tensor_mode(self, name):
        return self._modes.get(name, TensorIOMode.NONE)

    def get_tensor_dtype(self, name):
        return getattr(DataType, self._io[name]["dtype"])

    def get_tensor_shape(self, name):
        return Dims(self._io[name]["shape"])

    def get_tensor_location(self, name):
        return getattr(TensorLocation, self._io[name]["location"])

    def get_tensor_profile_shape(self, name, profile_index):
        return [Dims(s) for s in self._profiles[profile_index][name]]

    def create_execution_context(self, strategy=None):
        return IExecutionContext(self)

    def _infer(self, values):
        """Run every layer on meta tensors `values` (IO name -> tensor), in place: the shapes of every tensor."""
        for layer, record, weights in zip(self._layers, self._records, self._weights):
            inputs = [None if n is None else values[n] for n in record["inputs"]]
            layer._check_at_run(inputs)
            outputs = layer._compute(inputs, weights)
            for name, tensor in zip(record["outputs"], outputs if isinstance(outputs, (tuple, list)) else (outputs,)):
                values[name] = tensor
        return values


class IExecutionContext:
    """Per-call state: input shapes, tensor addresses, and the execution itself."""

    def __init__(self, engine):
        self._engine = engine
        self.error_recorder = engine.error_recorder
        self._shapes, self._addresses, self._shapes_by_inputs = {}, {}, {}
        self.name = ""
        self.debug_sync = False

    engine = property(lambda self: self._engine)

    def set_input_shape(self, name, shape):
        engine = self._engine
        if engine.get_tensor_mode(name) != TensorIOMode.INPUT:
            return self._refuse(f"set_input_shape: '{name}' is not an input of the engine")
        low, _, high = engine._profiles[0][name]
        shape = tuple(int(d) for d in shape)
        if len(shape) != len(low) or any(not lo <= d <= hi for lo, d, hi in zip(low, shape, high)):
            return self._refuse(f"set_input_shape: shape {shape} of '{name}' is outside the optimization profile's "
                                f"min {tuple(low)} and max {tuple(high)}")
        self._shapes[name] = shape
        return True

    def _refuse(self, message):
        """Report a refused call as TensorRT does (to the error recorder, else the logger): False."""
        report_error(self.error_recorder, self._engine._logger, ErrorCodeTRT.INVALID_ARGUMENT, message)
        return False

    def get_tensor_shape(self, name):
        engine = self._engine
        if engine.get_tensor_mode(name) == TensorIOMode.INPUT:
            return Dims(self._shapes.get(name, engine.get_tensor_shape(name)))
        shapes = None if self._unset_inputs() else self._io_shapes()
        # An input's shape still unknown, or a failed assertion: as in TensorRT, the dims it decides are -1
        return engine.get_tensor_shape(name) if shapes is None else Dims(shapes[name])

    def _io_shapes(self):
        """Every IO tensor's shape at the input shapes set, inferred once per set of input shapes (an engine with no
        dynamic dim has the shapes of its plan); None, the error reported, where an assertion fails at them."""
        key = tuple(sorted(self._shapes.items()))
        if key not in self._shapes_by_inputs:
            engine = self._engine
            if engine._static:
                shapes = {n: tuple(engine._io[n]["shape"]) for n in engine._io_names}
            else:
                try:
                    values = engine._infer({n: torch.empty(self.get_tensor_shape(n), dtype=engine._torch_dtypes[n],
                                                           device="meta") for n in engine._inputs})
                except NetworkError as failed:
                    self._refuse(f"input shapes {dict(self._shapes)}: {failed}")
                    return None
                shapes = {n: tuple(values[n].shape) for n in engine._io_names}
            self._shapes_by_inputs[key] = shapes
        return self._shapes_by_inputs[key]

    def _unset_inputs(self):
        """The inputs whose dynamic shape is not set yet."""
        engine = self._engine
        return [n for n in engine._inputs if n not in self._shapes and -1 in engine._io[n]["shape"]]

    def infer_shapes(self):
        unset = self._unset_inputs()
        if not unset and self._io_shapes() is None:
            raise RuntimeError("infer_shapes: the input shapes set fail an assertion of the engine (reported to the "
                               "error recorder)")
        return unset

    @property
    def all_binding_shapes_specified(self):
        return not self._unset_inputs()

    def set_tensor_address(self, name, memory):
        if self._engine.get_tensor_mode(name) == TensorIOMode.NONE:
            return False
        self._addresses[name] = int(memory)
        return True

    def get_tensor_address(self, name):
        return self._addresses.get(name, 0)

    def execute_v2(self, bindings):
        for name, address in zip(self._engine._io_names, bindings):
            self._addresses[name] = int(address)
        return self.execute_async_v3(0)

    def execute_async_v3(self, stream_handle):
        engine = self._engine
        unset = self._unset_inputs()
        if unset:
            return self._refuse(f"execute_async_v3: the shape of input '{unset[0]}' is not set (set_input_shape)")
        unbound = [n for n in engine._io_names if n not in self._addresses]
        if unbound:
            return self._refuse(f"execute_async_v3: the address of '{unbound[0]}' is not set (set_tensor_address)")
        shapes = self._io_shapes()
        if shapes is None:
            return False
        # TensorRT refuses a null output address, even for an empty output, and a null input address unless empty
        null = [n for n in engine._io_names if self._addresses[n] == 0 and (n in engine._outputs or 0 not in shapes[n])]
        if null:
            return self._refuse(f"execute_async_v3: {engine.get_tensor_mode(null[0]).name.lower()} '{null[0]}' has "
                                "a null address")
        views = {n: _view(self._addresses[n], shapes[n], engine._torch_dtypes[n], engine._device)
                 for n in engine._io_names}
        if engine._device.type == "cuda" and stream_handle != torch.cuda.current_stream().cuda_stream:
            with torch.cuda.stream(torch.cuda.ExternalStream(stream_handle)):
                self._execute(views)
        else:
            self._execute(views)
        return True

    def _execute(self, views):
        engine = self._engine
        results = engine._program(*[views[n] for n in engine._inputs])
        for name, result in zip(engine._outputs, results):
            views[name].copy_(result)


_TYPESTR = {dtype: np.dtype(torch.empty((), dtype=dtype).numpy().dtype).str
            for dtype in (torch.float32, torch.float16, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
                          torch.bool, torch.float64)}


class _ArrayInterface:
    def __init__(self, key, interface):
        setattr(self, key, interface)


def _view(address, shape, dtype, device):
    """A tensor viewing `address` (as TensorRT reads it), through the array interface protocols."""
    shape = tuple(shape)
    if 0 in shape or address == 0:
        return torch.empty(shape, dtype=dtype, device=device)
    storage = torch.int16 if dtype == torch.bfloat16 else dtype
    typestr = _TYPESTR[storage]
    interface = {"shape": shape, "typestr": typestr, "data": (address, False), "strides": None, "version": 3}
    if device.type == "cuda":
        tensor = torch.as_tensor(_ArrayInterface("__cuda_array_interface__", interface), device=device)
    else:
        tensor = torch.from_numpy(np.asarray(_ArrayInterface("__array_interface__", interface)))
    return tensor.view(dtype) if storage is not dtype else tensor
