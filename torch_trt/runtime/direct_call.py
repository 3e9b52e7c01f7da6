"""Calling a compiled module's one engine from Python, without the TorchScript interpreter.

A dynamo graph that converts whole compiles to a module whose forward is nothing but
`execute_engine` on its inputs. Running it through TorchScript costs a call of the interpreter
and a boxed dispatch back into Python (about 35 µs per call on a GPU host) around the same
function this module calls directly with the module's constants.
"""

from .execute_engine import execute_engine

_PLUMBING = {"prim::Constant", "prim::ListConstruct", "torch_trt::execute_engine", "prim::ListUnpack",
             "prim::TupleConstruct"}


def direct_engine_call(module):
    """A function of the module's inputs returning what `module(*inputs)` returns, by calling its one engine
    directly; None when the module's graph does more than pass inputs to one engine and return its outputs (or
    inputs)."""
    graph = module.graph
    nodes = list(graph.nodes())
    calls = [node for node in nodes if node.kind() == "torch_trt::execute_engine"]
    if len(calls) != 1 or any(node.kind() not in _PLUMBING for node in nodes):
        return None
    (call,) = calls
    packed, *settings = call.inputs()
    parameters = [value.unique() for value in list(graph.inputs())[1:]]  # after self; Values compare by id
    engine_inputs = [value.unique() for value in packed.node().inputs()]
    if (packed.node().kind() != "prim::ListConstruct" or any(v not in parameters for v in engine_inputs)
            or any(value.node().kind() != "prim::Constant" for value in settings)):
        return None
    users = [use.user for use in call.output().uses()]
    if len(users) != 1 or users[0].kind() != "prim::ListUnpack":
        return None
    unpacked = [value.unique() for value in users[0].outputs()]
    result = graph.return_node().input()
    as_tuple = result.node().kind() == "prim::TupleConstruct"
    returned = [value.unique() for value in (result.node().inputs() if as_tuple else [result])]
    if any(value not in unpacked and value not in parameters for value in returned):
        return None
    positions = [parameters.index(value) for value in engine_inputs]
    # each result: (True, index of an engine output) or (False, index of a module input returned as it came)
    sources = [(True, unpacked.index(v)) if v in unpacked else (False, parameters.index(v)) for v in returned]
    arguments = [value.toIValue() for value in settings]  # engine tensor, engine id, target, device

    def call_engine(*inputs):
        outputs = execute_engine([inputs[p] for p in positions], *arguments)
        results = tuple(outputs[k] if from_engine else inputs[k] for from_engine, k in sources)
        return results if as_tuple else results[0]

    return call_engine
