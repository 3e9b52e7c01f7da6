"""The ILogger both targets build and run with: warnings go to Python logging, errors are kept for the caller."""

import functools
import logging

from . import target_name

logger = logging.getLogger(__name__)


def target_logger(trt):
    """A new ILogger of the target `trt` whose `errors` list keeps every ERROR and INTERNAL_ERROR message."""
    return _logger_class(trt)()


@functools.lru_cache(maxsize=None)
def _logger_class(trt):
    """The ILogger subclass for one target module (TensorRT's bindings need a subclass of their own ILogger)."""

    class TargetLogger(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.errors = []

        def log(self, severity, msg):
            if int(severity) <= int(trt.ILogger.ERROR):
                self.errors.append(msg)
                logger.debug("target error: %s", msg)
            elif int(severity) == int(trt.ILogger.WARNING):
                logger.warning("%s: %s", target_name(trt), msg)
            else:
                logger.debug("%s: %s", target_name(trt), msg)

    return TargetLogger
