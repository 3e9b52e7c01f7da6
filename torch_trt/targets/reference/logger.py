"""ILogger and Logger: where the reference reports what TensorRT would log."""

from .enums import Severity


class ILogger:
    """Subclass and implement log(severity, msg), as with tensorrt.ILogger."""

    Severity = Severity
    INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = (Severity.INTERNAL_ERROR, Severity.ERROR, Severity.WARNING,
                                                     Severity.INFO, Severity.VERBOSE)

    def log(self, severity, msg):
        raise NotImplementedError


class Logger(ILogger):
    """Prints messages at or above min_severity to stderr, like tensorrt.Logger."""

    def __init__(self, min_severity=Severity.WARNING):
        self.min_severity = min_severity

    def log(self, severity, msg):
        if int(severity) <= int(self.min_severity):
            import sys

            print(f"[TRT] [{severity.name[0]}] {msg}", file=sys.stderr)
