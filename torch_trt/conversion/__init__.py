"""Conversion: one TorchScript graph of tensors in, one serialized engine out.

`convert_block(graph, input_specs, settings, trt, device)` creates a network, walks the graph
with the registered evaluators and converters (interpreter.py), and builds it (build.py).
"""

from ..targets.target_logger import target_logger
from .build import build_engine, eager_tf32
from .context import ConversionCtx
from .interpreter import convert_graph
from .registry import converter, evaluator


def convert_block(graph, input_specs, settings, trt, device):
    """Serialized engine bytes for `graph`, whose inputs are described by `input_specs` (Input objects)."""
    builder = trt.Builder(target_logger(trt))
    ctx = ConversionCtx(trt, builder, settings)
    convert_graph(ctx, graph, input_specs)
    return build_engine(ctx, builder, input_specs, device, eager_tf32(graph))


__all__ = ["convert_block", "converter", "evaluator", "ConversionCtx"]
