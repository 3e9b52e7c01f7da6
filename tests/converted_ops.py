"""`record_converted()`: the ops converters handled inside a block, for tests that check which converters ran.

    with record_converted() as converted:
        torch_trt.compile(module, inputs=[x])
    assert "aten::relu" in converted

It wraps the interpreter's converter lookup for the block only, so outside it conversion runs as
shipped: each converter dispatched inside the block records its node's kind once it returns. Nodes
that evaluators handle (constants, sizes, lists) are not recorded. Blocks nest.
"""

import contextlib
import dataclasses

from torch_trt.conversion import interpreter


@contextlib.contextmanager
def record_converted():
    """The kinds of the nodes that converters (not evaluators) handle inside this block, in conversion order."""
    kinds, find_converter = [], interpreter.find_converter

    def find_recording_converter(node):
        registration = find_converter(node)
        return registration and dataclasses.replace(registration, function=_recording(registration.function, kinds))

    interpreter.find_converter = find_recording_converter
    try:
        yield kinds
    finally:
        interpreter.find_converter = find_converter


def _recording(function, kinds):
    """`function`, appending the node's kind to `kinds` when it returns."""
    def convert(ctx, node, args):
        outputs = function(ctx, node, args)
        kinds.append(node.kind())
        return outputs

    return convert
