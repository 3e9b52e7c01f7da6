"""Engines deserialized once per process and device, run through the target's context API, freed with their modules.

`EngineRunner.__call__` is the per-call path: check inputs against the engine's IO, then, under
the engine's lock (and its device, unless the call is a replay), set shapes and addresses, allocate
outputs and `execute_async_v3`; on CUDA the call is replayed from a CUDA graph per input shape
(cuda_graphs.py).
Its cost does not depend on the engine's size: the bytes are only read on the first call.

Threads and streams: one execution context (and one set of CUDA graphs, whose static buffers belong
to it) serves every caller. Calls of one engine are enqueued one at a time (its lock), and each call's
stream first waits for the end of the last call of any engine on the device (cuda_graphs.py: the
device's graphs share memory), so they also run on the GPU one at a time, whatever streams the callers
use: two callers on two streams would otherwise run one context (or one graph's buffers) at once. A
captured shape replays on the caller's stream. Anything else (warm-up, uncaptured calls) runs on the
engines' side stream (one per device), which waits for the caller's stream before and which the
caller's stream waits for after, so the call is ordered like any kernel the caller enqueues; this
keeps TensorRT off the legacy default stream, where it would add device synchronizations.

Lifetime: a runner lives as long as a compiled module holding its engine (the engine's uint8
constant tensor): each such tensor holds a reference, dropped by a finalizer when the tensor dies
(the module is deleted, or torch._dynamo.reset() forgets it); the last one frees the engine, its
context and its CUDA graphs.

Sharing: modules holding the same engine bytes share one runner, except a module whose caller lends
its engines tensors to read in place of their own weights (`lend`): its engines get runners of their
own, since another module with the same bytes lends other tensors, or none.
"""

import functools
import hashlib
import logging
import threading
import weakref

import torch

from ..errors import EngineIOError
from ..targets import device_guard, lending, resolve_target
from ..targets.dtypes import torch_dtype
from ..targets.target_logger import error_recorder, target_logger
from .cuda_graphs import GraphedCalls

logger = logging.getLogger(__name__)

_RUNNERS = {}  # (engine id, device), or for a lent engine (engine id, device, id(engine tensor)) -> EngineRunner
_LENT = {}  # id(engine tensor) -> the tensors lent to its engine
_HASHED = {}  # id(engine tensor) -> the engine id its bytes were hashed to in this process (engines stitched here)
_LOCK = threading.RLock()  # re-entrant: a finalizer may run (garbage collection) while get_runner holds it


def get_runner(engine_id, engine_tensor, target, device):
    """The EngineRunner of `engine_id` on `device`, kept alive while `engine_tensor` (the module's engine) lives."""
    device = torch.device(device)
    lent = _LENT.get(id(engine_tensor))
    key = (engine_id, device) if lent is None else (engine_id, device, id(engine_tensor))
    runner = _RUNNERS.get(key)
    if runner is None or id(engine_tensor) not in runner.owners:
        with _LOCK:
            runner = _RUNNERS.get(key)
            data = memoryview(engine_tensor.cpu().numpy())  # the reference's weights view it: no copy
            if _HASHED.get(id(engine_tensor)) != engine_id:  # each module's bytes, also where a runner exists
                _verify(engine_id, data)
            if runner is None:
                runner = _RUNNERS[key] = EngineRunner(data, target, device, lent or ())
                if lent:  # the engine holds the tensors it reads; the others need not live as long as it
                    _LENT[id(engine_tensor)] = ()
            if id(engine_tensor) not in runner.owners:
                runner.owners[id(engine_tensor)] = weakref.finalize(engine_tensor, _release, key, id(engine_tensor))
    return runner


def lend(module, tensors):
    """Lend `tensors` to the engines of compiled `module`, before its first call: each may read one in place of a
    weight with the same bytes (targets.lending), so whoever calls the module must keep them unchanged."""
    with _LOCK:
        for call in module.graph.findAllNodes("torch_trt::execute_engine"):
            _note(_LENT, call.inputsAt(1).toIValue(), tuple(tensors))


def _note(registry, engine_tensor, value):
    """registry[id(engine_tensor)] = value, for as long as the engine tensor lives."""
    registry[id(engine_tensor)] = value
    weakref.finalize(engine_tensor, registry.pop, id(engine_tensor), None)


@functools.cache
def _side_stream(device):
    """The stream every engine on `device` warms up and runs uncaptured calls on: one per device, since
    each stream that runs a cuBLAS call holds a workspace of its own (32 MiB on an H100) for the life of the
    process."""
    return torch.cuda.Stream(device)


def _release(key, owner):
    """The engine tensor `owner` died: forget it; free the runner when no module holds its engine any more."""
    with _LOCK:
        runner = _RUNNERS.get(key)
        if runner is None:
            return
        runner.owners.pop(owner, None)
        if not runner.owners:
            del _RUNNERS[key]
            logger.debug("released engine %s on %s", *key)


def engine_id(engine_bytes):
    """The id a compiled graph names its engine by: the start of the sha256 of the engine's bytes."""
    return hashlib.sha256(engine_bytes).hexdigest()[:32]


def hashed(engine_tensor, identifier):
    """Record that `engine_tensor`'s bytes were just hashed to `identifier` (its engine was stitched in this
    process), so that loading it skips hashing them again: a transformer's plan takes a tenth of a second or more."""
    _note(_HASHED, engine_tensor, identifier)


def _verify(expected_id, data):
    """Refuse engine bytes that changed since compilation (a corrupted or edited saved module)."""
    actual = engine_id(data)
    if actual != expected_id:
        raise EngineIOError(f"the engine's bytes do not match its id (sha256 {actual} != {expected_id}): the saved "
                            "module is corrupted or was edited; recompile it or restore the file")


class EngineRunner:
    """A deserialized engine, its execution context and IO metadata."""

    def __init__(self, data, target, device, lent=()):
        trt = self.trt = resolve_target(target, device)
        self.device = device
        self.owners = {}  # id(engine tensor) -> its weakref.finalize
        self.recorder = error_recorder(trt)  # the engine and its context inherit it from the runtime
        with device_guard(device):  # the engine's memory and context belong to its device
            runtime = trt.Runtime(target_logger(trt))
            runtime.error_recorder = self.recorder
            with lending(trt, lent):
                self.engine = runtime.deserialize_cuda_engine(data)
            if self.engine is None:
                raise EngineIOError(f"cannot deserialize the {target} engine ({len(data)} bytes): "
                                    f"{'; '.join(self.recorder.errors) or 'unknown reason'}; the engine bytes are "
                                    "corrupted or were built by another TensorRT version: recompile the module")
            self.context = self.engine.create_execution_context()
            self.stream = _side_stream(device) if device.type == "cuda" else None
            # Recorded again by each call (under the lock), so no call makes one: the handoff between a caller's
            # stream and the side stream.
            self.handoff = torch.cuda.Event() if self.stream else None
            # TensorRT refuses a null output address, which is what an empty tensor has: bind this instead.
            self.placeholder = torch.empty(1, dtype=torch.uint8, device=device)
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        self.inputs = sorted((n for n in names if self.engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT),
                             key=_index)
        self.outputs = sorted((n for n in names if self.engine.get_tensor_mode(n) == trt.TensorIOMode.OUTPUT),
                              key=_index)
        self.dtypes = {n: torch_dtype(trt, self.engine.get_tensor_dtype(n)) for n in names}
        self.profiles = {n: [tuple(s) for s in self.engine.get_tensor_profile_shape(n, 0)] for n in self.inputs}
        self.lock = threading.Lock()
        self.graphs = GraphedCalls(self.execute, device) if self.stream else None
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
                                    f"min={low} max={high}; recompile with an Input covering it (where the model "
                                    "computes this tensor, its shape follows the data or sizes the compile's example "
                                    "runs did not reach; torch_executed_ops can keep the op making it in PyTorch)")

    def __call__(self, tensors):
        self.check_inputs(tensors)
        tensors = [t.contiguous() for t in tensors]
        with self.lock:
            if self.stream is None:
                return self.execute(tensors)
            caller = torch.cuda.current_stream(self.device)
            # A replay needs no device guard (the graph, the copies and the events name their device), which keeps
            # the guard's cost off the path of most calls.
            outputs = self.graphs.replay(tensors, caller)
            if outputs is None:
                with device_guard(self.device), self.graphs.ordered(caller):
                    outputs = self._run_on_side_stream(caller, tensors)
            return outputs

    def _run_on_side_stream(self, caller, tensors):
        """Run on the engines' side stream (a new shape warms up and is captured first), ordered after the caller's
        stream's work and before its later work."""
        self.handoff.record(caller)
        self.stream.wait_event(self.handoff)
        with torch.cuda.stream(self.stream):
            outputs = self.graphs.capture_and_run(tensors)
        self.handoff.record(self.stream)
        caller.wait_event(self.handoff)
        for tensor in tensors:  # the caching allocator must not reuse an input before the engine has read it
            tensor.record_stream(self.stream)
        for output in outputs:  # nor an output, made on the side stream, before the caller's stream used it
            output.record_stream(caller)
        return outputs

    def execute(self, tensors):
        """One call of the engine on contiguous `tensors` on the current stream; returns new output tensors."""
        context = self.context
        self.recorder.clear()  # each call reports its own errors, not every earlier call's
        for name, tensor in zip(self.inputs, tensors):
            context.set_input_shape(name, tuple(tensor.shape))
            context.set_tensor_address(name, _address(tensor, self.placeholder))
        outputs = []
        for name in self.outputs:
            shape = tuple(context.get_tensor_shape(name))
            if min(shape, default=0) < 0:  # the engine could not infer it: an assertion on the input shapes failed
                self._fail()
            output = torch.empty(shape, dtype=self.dtypes[name], device=self.device)
            context.set_tensor_address(name, _address(output, self.placeholder))
            outputs.append(output)
        stream = torch.cuda.current_stream().cuda_stream if self.stream is not None else 0
        if not context.execute_async_v3(stream):
            self._fail()
        return outputs

    def _fail(self):
        raise EngineIOError(f"engine execution failed: {'; '.join(self.recorder.errors) or 'unknown reason'}")


def _address(tensor, placeholder):
    """The tensor's address, or the placeholder's for an empty tensor (whose data_ptr() is null)."""
    return tensor.data_ptr() if tensor.numel() else placeholder.data_ptr()


def _index(name):
    """input_3 -> 3: IO tensors are named by position at conversion."""
    return int(name.rsplit("_", 1)[1])
