"""The errors torch_trt raises; each names the node, its schema and why, where there is one.

`Code` and `Reason` are the one vocabulary for "why this node does not run in an engine": the
partitioner's fallback report, `require_full_compilation` errors and conversion refusals all use it.
"""

import enum
from dataclasses import dataclass


class Code(enum.Enum):
    """Why a node runs in PyTorch; the report groups by these."""

    USER_REQUEST = "user request"
    NO_CONVERTER = "no converter"
    UNSUPPORTED_ARGUMENTS = "unsupported arguments"
    CONTROL_FLOW = "control flow"
    MUTATION = "mutation"
    DTYPE = "unsupported dtype"
    SHAPE = "unsupported shape"
    DATA_DEPENDENT = "data-dependent value"
    NON_TENSOR = "non-tensor boundary"
    LAYOUT = "strides read"
    SMALL_BLOCK = "too small a block"
    CONVERTER_REFUSED = "refused at conversion"
    BUILD_REFUSED = "refused at engine build"


@dataclass(frozen=True)
class Reason:
    """A fallback reason: its code and a sentence naming the values involved."""

    code: Code
    detail: str

    def __str__(self):
        return f"{self.detail} [{self.code.value}]"


class TorchTRTError(Exception):
    """Base of every torch_trt error."""


def describe_node(node):
    """`aten::relu(...)` as the user wrote it: kind, schema and source location of a TorchScript node."""
    where = source_line(node)
    return f"{node.kind()} [{node.schema()}]{f' at {where}' if where else ''}"


def source_line(node):
    """The first line of a TorchScript node's source range (`File "m.py", line 7`), or "" where it has none."""
    return next(iter(node.sourceRange().strip().splitlines()), "")


class UnsupportedOperatorError(TorchTRTError):
    """Nodes that cannot run in an engine while full compilation was required."""

    def __init__(self, reasons):
        self.reasons = reasons  # list of (node description, reason)
        lines = "\n".join(f"  - {node}: {reason}" for node, reason in reasons)
        super().__init__(f"{len(reasons)} node(s) cannot be converted to TensorRT:\n{lines}\n"
                         "Set require_full_compilation=False to run them in PyTorch.")


class ConversionError(TorchTRTError):
    """A converter or the network refused a node; `reason` (a Reason) is what the partition report shows
    when the node is moved to PyTorch instead."""

    def __init__(self, node, detail, code=Code.CONVERTER_REFUSED):
        self.node, self.reason = node, Reason(code, detail)
        super().__init__(f"while converting {describe_node(node)}: {detail}")


class LoweringError(TorchTRTError):
    """A lowering pass or the module preparation failed."""


class EngineBuildError(TorchTRTError):
    """The target's builder refused the network; `nodes` are the converted nodes whose layers its errors name (none
    when they name no layer)."""

    def __init__(self, message, nodes=()):
        super().__init__(message)
        self.nodes = list(nodes)


class ShapeAnalysisError(TorchTRTError):
    """The graph could not run at a shape of the Input specs' profile; `which` names it ("min", "opt", "max")."""

    def __init__(self, message, which):
        super().__init__(message)
        self.which = which


class EngineIOError(TorchTRTError):
    """Inputs given to an engine do not match its IO (count, shape, dtype, device) or its bytes are bad."""
