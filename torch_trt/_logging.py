"""torch_trt's package logger: warnings reach stderr by default, `set_log_level` shows more.

The package logger has its own stderr handler (format "torch_trt LEVEL: message") and its level
is left unset, so Python's default (WARNING, from the root logger) applies until the user picks
one. Records also propagate to the root logger, so the user's logging configuration and pytest's
caplog see them; when the root logger has a handler that writes to the screen too, each record
shows twice: `logging.getLogger("torch_trt").handlers.clear()` keeps only the user's handlers.
"""

import logging
import sys

PACKAGE = "torch_trt"
FORMAT = "torch_trt %(levelname)s: %(message)s"


class StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a record arrives (pytest and notebooks replace it after import)."""

    def __init__(self):
        logging.Handler.__init__(self)
        self.setFormatter(logging.Formatter(FORMAT))

    @property
    def stream(self):
        return sys.stderr


def install_stderr_handler():
    """Give the package logger its stderr handler (once, however often the package is imported)."""
    package = logging.getLogger(PACKAGE)
    if not any(isinstance(handler, StderrHandler) for handler in package.handlers):
        package.addHandler(StderrHandler())


def set_log_level(level):
    """Set the level of torch_trt's loggers: logging.INFO shows per-phase progress, logging.ERROR hides warnings."""
    logging.getLogger(PACKAGE).setLevel(level)
