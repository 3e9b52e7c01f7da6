"""ILogger, Logger and IErrorRecorder: where the reference reports what TensorRT would log, and its errors."""

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


class IErrorRecorder:
    """Subclass and implement every method, as with tensorrt.IErrorRecorder. A builder, network, runtime, engine or
    execution context with an `error_recorder` reports its errors there instead of to its logger, and hands the
    recorder on to the networks, engines and contexts it creates."""

    MAX_DESC_LENGTH = 127

    def num_errors(self):
        raise NotImplementedError

    def get_error_code(self, arg0):
        raise NotImplementedError

    def get_error_desc(self, arg0):
        raise NotImplementedError

    def has_overflowed(self):
        raise NotImplementedError

    def clear(self):
        raise NotImplementedError

    def report_error(self, arg0, arg1):
        raise NotImplementedError


def report_error(recorder, logger, code, message):
    """An error of an object with `recorder` (or None) and `logger`: to the recorder when there is one, else logged."""
    if recorder is not None:
        recorder.report_error(code, message)
    else:
        logger.log(Severity.ERROR, message)
