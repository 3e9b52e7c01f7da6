"""What both targets build and run with: one logger per target and process, and an error recorder per object.

TensorRT keeps the first logger it is given for the whole process, so errors cannot be told apart by
logger: each builder and runtime gets an IErrorRecorder of its own (networks, engines and contexts
inherit it), whose `errors` the caller turns into the exception that names what failed. The logger
is TensorRT's own (C++, printing warnings) unless torch_trt logs at INFO or below when it is first
needed: a Python ILogger receives every message TensorRT emits, VERBOSE ones included, each taking
the GIL during the build; then warnings reach Python logging at WARNING and the rest at DEBUG.
"""

import functools
import logging

from . import target_name

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=None)
def target_logger(trt):
    """The ILogger of the target `trt` for this process (see the module docstring for which)."""
    if logging.getLogger("torch_trt").isEnabledFor(logging.INFO):
        return _python_logger_class(trt)()
    return trt.Logger(trt.Logger.WARNING)


def error_recorder(trt):
    """A new IErrorRecorder of the target `trt` whose `errors` list keeps each reported error's description."""
    return _recorder_class(trt)()


@functools.lru_cache(maxsize=None)
def _python_logger_class(trt):
    """The ILogger subclass for one target module (TensorRT's bindings need a subclass of their own ILogger)."""

    class TargetLogger(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)

        def log(self, severity, msg):
            level = logging.WARNING if int(severity) <= int(trt.ILogger.WARNING) else logging.DEBUG
            logger.log(level, "%s: %s", target_name(trt), msg)

    return TargetLogger


@functools.lru_cache(maxsize=None)
def _recorder_class(trt):
    """The IErrorRecorder subclass for one target module."""

    class TargetErrorRecorder(trt.IErrorRecorder):
        def __init__(self):
            trt.IErrorRecorder.__init__(self)
            self.errors, self.codes = [], []

        def num_errors(self):
            return len(self.errors)

        def get_error_code(self, arg0):
            return self.codes[arg0]

        def get_error_desc(self, arg0):
            return self.errors[arg0]

        def has_overflowed(self):
            return False

        def clear(self):
            self.errors.clear()
            self.codes.clear()

        def report_error(self, arg0, arg1):
            self.codes.append(arg0)
            self.errors.append(arg1)
            logger.debug("%s error: %s", target_name(trt), arg1)
            return True

    return TargetErrorRecorder
