"""Replace an engine segment's nodes in the graph by one call of torch_trt::execute_engine."""

import hashlib

import torch


def engine_id(engine_bytes):
    """A stable id for the engine cache: the hash of its bytes, computed once at compile time."""
    return hashlib.sha256(engine_bytes).hexdigest()[:32]


def stitch_engine(graph, segment, engine_bytes, target, device):
    """Insert the execute_engine call after the segment's last node, reroute its outputs, delete its nodes."""
    with graph.insert_point_guard(segment.nodes[0]):
        engine = graph.insertConstant(torch.frombuffer(bytearray(engine_bytes), dtype=torch.uint8))
        settings = [graph.insertConstant(s) for s in (engine_id(engine_bytes), target, str(device))]
    inputs = graph.create("prim::ListConstruct", segment.inputs)
    inputs.output().setType(torch._C.ListType.ofTensors())
    call = graph.create("torch_trt::execute_engine", [inputs.output(), engine] + settings)
    call.output().setType(torch._C.ListType.ofTensors())
    unpack = graph.create("prim::ListUnpack", [call.output()], len(segment.outputs))
    inputs.insertAfter(segment.nodes[-1])
    call.insertAfter(inputs)
    unpack.insertAfter(call)
    for old, new in zip(segment.outputs, unpack.outputs()):
        new.setType(old.type())
        old.replaceAllUsesWith(new)
    for node in reversed(segment.nodes):
        node.destroy()
    return call
