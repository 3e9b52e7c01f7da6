"""torch_trt: compile PyTorch models into TensorRT engines and run them inside PyTorch.

    trt_mod = torch_trt.compile(model, inputs=[torch_trt.Input((1, 3, 224, 224))])
    opt = torch.compile(model, backend="tensorrt")
"""

from . import _logging
from . import converters, runtime  # noqa: F401  (register converters and torch.ops.torch_trt.execute_engine)
from .conversion import evaluators  # noqa: F401  (registers evaluators)
from ._input import Input
from ._logging import set_log_level
from ._settings import CompileSettings
from .backend.explain import explain
from .backend.torchscript import compile
from .conversion.registry import converter, evaluator

_logging.install_stderr_handler()

__all__ = ["compile", "explain", "Input", "CompileSettings", "converter", "evaluator", "set_log_level"]
