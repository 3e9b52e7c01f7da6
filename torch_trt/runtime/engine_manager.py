"""Engines deserialized once per process, keyed by engine id, and run through the target's context API.

`EngineRunner.__call__` is the per-call path: check inputs against the engine's IO, then, under
the engine's device and a per-engine lock (one execution context serves all threads), set shapes
and addresses, allocate outputs and `execute_async_v3` on PyTorch's current stream; on CUDA the
call is replayed from a CUDA graph per input shape (cuda_graphs.py). Its cost does not depend on
the engine's size: the bytes are only read on the first call.
"""

import hashlib
import logging
import threading

import torch

from ..conversion.context import TargetLogger, torch_dtype
from ..errors import EngineIOError
from ..targets import resolve_target
from .cuda_graphs import GraphedCalls

logger = logging.getLogger(__name__)

_RUNNERS = {}
_LOCK = threading.Lock()


def get_runner(engine_id, engine_bytes, target, device):
    """The EngineRunner for `engine_id`, deserializing `engine_bytes` on first use once their hash matches the id."""
    runner = _RUNNERS.get(engine_id)
    if runner is None:
        with _LOCK:
            runner = _RUNNERS.get(engine_id)
            if runner is None:
                data = engine_bytes.cpu().numpy().tobytes() if isinstance(engine_bytes, torch.Tensor) else engine_bytes
                _verify(engine_id, data)
                runner = _RUNNERS[engine_id] = EngineRunner(data, target, torch.device(device))
    return runner


def engine_id(engine_bytes):
    """The id a compiled graph names its engine by: the start of the sha256 of the engine's bytes."""
    return hashlib.sha256(engine_bytes).hexdigest()[:32]


def _verify(expected_id, data):
    """Refuse engine bytes that changed since compilation (a corrupted or edited saved module)."""
    actual = engine_id(data)
    if actual != expected_id:
        raise EngineIOError(f"the engine's bytes do not match its id (sha256 {actual} != {expected_id}): the saved "
                            "module is corrupted or was edited; recompile it or restore the file")


class EngineRunner:
    """A deserialized engine, its execution context and IO metadata."""

    def __init__(self, data, target, device):
        trt = self.trt = resolve_target(target)
        self.device = device
        self.logger = TargetLogger(trt)
        self.engine = trt.Runtime(self.logger).deserialize_cuda_engine(data)
        if self.engine is None:
            raise EngineIOError(f"cannot deserialize the {target} engine ({len(data)} bytes): "
                                f"{'; '.join(self.logger.errors) or 'unknown reason'}; the engine bytes are "
                                "corrupted or were built by another TensorRT version: recompile the module")
        self.context = self.engine.create_execution_context()
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        self.inputs = sorted((n for n in names if self.engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT),
                             key=_index)
        self.outputs = sorted((n for n in names if self.engine.get_tensor_mode(n) == trt.TensorIOMode.OUTPUT),
                              key=_index)
        self.dtypes = {n: torch_dtype(trt, self.engine.get_tensor_dtype(n)) for n in names}
        self.profiles = {n: [tuple(s) for s in self.engine.get_tensor_profile_shape(n, 0)] for n in self.inputs}
        self.lock = threading.Lock()
        self.run = GraphedCalls(self.execute, device) if device.type == "cuda" else self.execute
        logger.info("loaded %s engine: %d inputs, %d outputs, on %s", target, len(self.inputs), len(self.outputs),
                    device)

    def check_inputs(self, tensors):
        """Raise EngineIOError naming the input when count, device, dtype or shape do not fit the engine."""
        if len(tensors) != len(self.inputs):
            raise EngineIOError(f"engine expects {len(self.inputs)} inputs, got {len(tensors)}")
        for index, (name, tensor) in enumerate(zip(self.inputs, tensors)):
            if tensor.device != self.device:
                raise EngineIOError(f"engine input {index} is on {tensor.device}, but the engine runs on {self.device}; "
                                    f"move it with .to('{self.device}')")
            if tensor.dtype != self.dtypes[name]:
                raise EngineIOError(f"engine input {index} has dtype {tensor.dtype}, the engine was built for "
                                    f"{self.dtypes[name]}")
            low, _, high = self.profiles[name]
            shape = tuple(tensor.shape)
            if len(shape) != len(low) or any(not lo <= d <= hi for lo, d, hi in zip(low, shape, high)):
                raise EngineIOError(f"engine input {index} has shape {shape}, outside the engine's profile "
                                    f"min={low} max={high}; recompile with an Input covering it")

    def __call__(self, tensors):
        self.check_inputs(tensors)
        tensors = [t.contiguous() for t in tensors]
        with self.lock:
            if self.device.type == "cuda":
                with torch.cuda.device(self.device):
                    return self.run(tensors)
            return self.run(tensors)

    def execute(self, tensors):
        """One call of the engine on contiguous `tensors` on the current stream; returns new output tensors."""
        context = self.context
        for name, tensor in zip(self.inputs, tensors):
            context.set_input_shape(name, tuple(tensor.shape))
            context.set_tensor_address(name, tensor.data_ptr())
        outputs = []
        for name in self.outputs:
            output = torch.empty(tuple(context.get_tensor_shape(name)), dtype=self.dtypes[name], device=self.device)
            context.set_tensor_address(name, output.data_ptr())
            outputs.append(output)
        stream = torch.cuda.current_stream(self.device).cuda_stream if self.device.type == "cuda" else 0
        if not context.execute_async_v3(stream):
            raise EngineIOError(f"engine execution failed: {'; '.join(self.logger.errors) or 'unknown reason'}")
        return outputs


def _index(name):
    """input_3 -> 3: IO tensors are named by position at conversion."""
    return int(name.rsplit("_", 1)[1])
