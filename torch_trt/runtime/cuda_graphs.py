"""CUDA graphs around an engine call: captured once per input shape, replayed with no per-layer launch.

`GraphedCalls(execute, device)` wraps `execute(tensors) -> outputs` (the engine call: set shapes and
addresses, enqueue). The first call at a new input shape (`capture_and_run`, on the engines' side
stream, never the legacy default one) warms up (code generation happens there), then captures one
call on that same stream into a CUDA graph whose inputs and outputs are static buffers; later calls
at that shape (`replay`, on the caller's stream: no stream switch per call) copy the inputs in,
replay, and return copies of the outputs (the buffers are reused by the next replay). Both targets
enqueue capturably (TensorRT's enqueueV3 and the reference's generated program). An engine whose
call cannot be captured (it synchronizes with the host) runs uncaptured from then on, and so does
every shape past MAX_GRAPHS, so memory held by graphs stays bounded.

cuBLAS workspaces: PyTorch keeps one per stream that ran a cuBLAS call (32 MiB on an H100), for the life of the
process. Compiling runs the model on the caller's stream (tracing, constant folding), the engines then run on the side
stream, so a process serving engines would hold two. The first capture on a device where no graph of ours is alive
drops every workspace (as inductor's CUDA graph trees do before each capture), so the side stream's, made again by
the warm-up and read by the graphs captured after it, is the one a serving process holds. Later captures must not
drop it: it is the scratch memory of the graphs already captured.
"""

import logging
import weakref

import torch

logger = logging.getLogger(__name__)

MAX_GRAPHS = 16  # captured input shapes per engine

_CAPTURED = weakref.WeakSet()  # the GraphedCalls holding a graph (so one that is not collected yet counts as alive)


class _Graph:
    """One captured call: its graph and its static input and output buffers."""

    def __init__(self, graph, inputs, outputs):
        self.graph, self.inputs, self.outputs = graph, inputs, outputs


class GraphedCalls:
    """`execute` in a CUDA graph per input shape: captured on the engines' side stream, replayed on any."""

    def __init__(self, execute, device):
        self.execute, self.device = execute, device
        self.graphs, self.pool, self.capturable = {}, None, True

    def replay(self, tensors):
        """The outputs of replaying, on the current stream, the graph captured for these input shapes; None when
        there is none."""
        graph = self.graphs.get(tuple(t.shape for t in tensors))
        if graph is None:
            return None
        for static, tensor in zip(graph.inputs, tensors):
            static.copy_(tensor)
        graph.graph.replay()
        return [output.clone() for output in graph.outputs]

    def capture_and_run(self, tensors):
        """`execute(tensors)` on the current stream (the side stream), replayed from a graph captured now for their
        shapes unless no more graphs may be added."""
        if not self.capturable or len(self.graphs) >= MAX_GRAPHS:
            return self.execute(tensors)
        graph = self._capture(tensors)
        if graph is None:
            return self.execute(tensors)
        self.graphs[tuple(t.shape for t in tensors)] = graph
        return self.replay(tensors)

    def _capture(self, tensors):
        """Warm up and capture one call at these shapes; None (and no more captures) when it cannot be captured."""
        inputs = [t.clone(memory_format=torch.contiguous_format) for t in tensors]
        if not any(calls.device == self.device for calls in _CAPTURED):
            torch._C._cuda_clearCublasWorkspaces()  # module docstring: no graph reads one yet
        self.execute(inputs)  # code generation and lazy allocations happen outside the capture
        graph = torch.cuda.CUDAGraph()
        try:  # on the current (side) stream: each other stream would get a cuBLAS workspace of its own (32 MiB)
            with torch.cuda.graph(graph, pool=self.pool, stream=torch.cuda.current_stream(self.device)):
                outputs = self.execute(inputs)
        except RuntimeError as error:
            self.capturable = False
            logger.info("engine call could not be captured in a CUDA graph (%s); it runs uncaptured",
                        str(error).splitlines()[0])
            return None
        self.pool = graph.pool()
        _CAPTURED.add(self)
        logger.debug("captured a CUDA graph for input shapes %s", [tuple(t.shape) for t in tensors])
        return _Graph(graph, inputs, outputs)
