"""The errors torch_trt raises; each names the node, its schema and why, where there is one."""


class TorchTRTError(Exception):
    """Base of every torch_trt error."""


def describe_node(node):
    """`aten::relu(...)` as the user wrote it: kind, schema and source location of a TorchScript node."""
    schema = node.schema()
    source = node.sourceRange().strip().splitlines()
    where = f" at {source[0]}" if source else ""
    return f"{node.kind()} [{schema}]{where}"


class UnsupportedOperatorError(TorchTRTError):
    """Nodes that cannot run in an engine while full compilation was required."""

    def __init__(self, reasons):
        self.reasons = reasons  # list of (node description, reason)
        lines = "\n".join(f"  - {node}: {reason}" for node, reason in reasons)
        super().__init__(f"{len(reasons)} node(s) cannot be converted to TensorRT:\n{lines}\n"
                         "Set require_full_compilation=False to run them in PyTorch.")


class ConversionError(TorchTRTError):
    """A converter failed or the network refused a layer while converting a node."""

    def __init__(self, node, reason):
        self.node, self.reason = node, reason
        super().__init__(f"while converting {describe_node(node)}: {reason}")


class LoweringError(TorchTRTError):
    """A lowering pass or the module preparation failed."""


class EngineBuildError(TorchTRTError):
    """The target's builder refused the network."""


class EngineIOError(TorchTRTError):
    """Inputs given to an engine do not match its IO (count, shape, dtype, device) or its bytes are bad."""
