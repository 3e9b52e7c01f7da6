"""CUDA graphs around an engine call: captured once per input shape, replayed with no per-layer launch.

`GraphedCalls(execute, device)` wraps `execute(tensors) -> outputs` (the engine call: set shapes and
addresses, enqueue). The first call at a new input shape (`capture_and_run`, on the engines' side
stream, never the legacy default one) warms up there (code generation happens then), then captures one
call into a CUDA graph whose inputs and outputs are static buffers; later calls at that shape (`replay`,
on the caller's stream: no stream switch per call) copy the inputs in, replay, and return copies of the
outputs (the buffers are reused by the next replay). Both targets enqueue capturably (TensorRT's enqueueV3
and the reference's generated program). An engine whose call cannot be captured (it synchronizes with the
host) runs uncaptured from then on, and so does every shape past MAX_GRAPHS, so memory held by graphs
stays bounded.

What the graphs of one device share (`_DeviceGraphs`): they are captured on one capture stream, which
nothing else uses, one capture at a time (a capture takes in whatever is enqueued on its stream meanwhile),
into one memory pool, so their intermediates share memory; and they read one cuBLAS workspace (PyTorch keeps
one per stream that ran a cuBLAS call, 32 MiB on an H100, and a graph reads the one of the stream it was
captured on). So no two replays may run at once, whatever streams their callers use: every engine call on the
device (a replay, or a call `ordered` around it) waits for the last one to end, and a replay copies its outputs
out before the next may start. One chain of calls per device also orders each engine's calls, which share its
execution context and its graphs' static buffers.

Each capture drops every cuBLAS workspace before its warm-up and again before it captures (as inductor's CUDA
graph trees do). The capture then makes the capture stream's workspace anew inside the graphs' pool, where no
other allocation can be handed it: a library that drops the workspaces later (inductor does, before each of its
captures) frees it into that pool, not to tensors the graphs would write into. And a process holds one workspace
at a time through a first call and while serving: compiling made one on the caller's stream, which is gone before
the warm-up makes the side stream's, which is gone before the capture makes its own.
"""

import contextlib
import functools
import logging
import threading

import torch

logger = logging.getLogger(__name__)

MAX_GRAPHS = 16  # captured input shapes per engine


class _DeviceGraphs:
    """What the CUDA graphs of every engine on one device share (module docstring), and the chain of calls there."""

    def __init__(self, device):
        self.capture_stream = torch.cuda.Stream(device)
        self.pool = torch.cuda.graph_pool_handle()
        self.capture_lock = threading.Lock()
        self.call_lock = threading.Lock()  # a stream's wait for the last call and its recording the next are one step
        self.last_call = torch.cuda.Event()


@functools.cache
def _device_graphs(device):
    return _DeviceGraphs(device)


class _Graph:
    """One captured call: its graph and its static input and output buffers."""

    def __init__(self, graph, inputs, outputs):
        self.graph, self.inputs, self.outputs = graph, inputs, outputs


class GraphedCalls:
    """`execute` in a CUDA graph per input shape: captured on the device's capture stream, replayed on any."""

    def __init__(self, execute, device):
        self.execute, self.device = execute, device
        self.shared = _device_graphs(device)
        self.graphs, self.capturable = {}, True

    def replay(self, tensors, stream):
        """The outputs of replaying, on `stream` (the current one) after the last call on the device, the graph
        captured for these input shapes; None when there is none."""
        graph = self.graphs.get(tuple(t.shape for t in tensors))
        if graph is None:
            return None
        shared = self.shared
        with shared.call_lock:
            stream.wait_event(shared.last_call)
            for static, tensor in zip(graph.inputs, tensors):
                static.copy_(tensor)
            graph.graph.replay()
            outputs = [output.clone() for output in graph.outputs]
            shared.last_call.record(stream)
        return outputs

    @contextlib.contextmanager
    def ordered(self, stream):
        """Around a call that is not a replay, enqueued on `stream`: after the last call on the device, before the
        next. Its work is enqueued outside the lock, since it may generate code first: another engine's replay may
        run meanwhile (this call's work reads another stream's cuBLAS workspace and memory outside the graphs'
        pool, and its own replays take the lock), and the call's end is ordered after it."""
        shared = self.shared
        stream.wait_event(shared.last_call)
        yield
        with shared.call_lock:
            stream.wait_event(shared.last_call)
            shared.last_call.record(stream)

    def capture_and_run(self, tensors):
        """`execute(tensors)` on the current stream (the side stream), replayed from a graph captured now for their
        shapes unless no more graphs may be added."""
        if not self.capturable or len(self.graphs) >= MAX_GRAPHS:
            return self.execute(tensors)
        graph = self._capture(tensors)
        if graph is None:
            return self.execute(tensors)
        self.graphs[tuple(t.shape for t in tensors)] = graph
        return self.replay(tensors, torch.cuda.current_stream(self.device))

    def _capture(self, tensors):
        """Warm up and capture one call at these shapes; None (and no more captures) when it cannot be captured."""
        inputs = [t.clone(memory_format=torch.contiguous_format) for t in tensors]
        graph, shared = torch.cuda.CUDAGraph(), self.shared
        with shared.capture_lock:  # never while another thread captures: its graph's workspace would be freed
            torch._C._cuda_clearCublasWorkspaces()  # module docstring
        self.execute(inputs)  # code generation and lazy allocations happen outside the capture
        with shared.capture_lock:
            torch._C._cuda_clearCublasWorkspaces()
            try:  # thread_local: a CUDA call another thread makes meanwhile does not fail
                with torch.cuda.graph(graph, pool=shared.pool, stream=shared.capture_stream,
                                      capture_error_mode="thread_local"):
                    outputs = self.execute(inputs)
            except RuntimeError as error:
                self.capturable = False
                logger.info("engine call could not be captured in a CUDA graph (%s); it runs uncaptured",
                            str(error).splitlines()[0])
                return None
        logger.debug("captured a CUDA graph for input shapes %s", [tuple(t.shape) for t in tensors])
        return _Graph(graph, inputs, outputs)
