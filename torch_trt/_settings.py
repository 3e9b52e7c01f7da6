"""CompileSettings: the one settings dataclass behind torch_trt.compile and the dynamo backend."""

import dataclasses
from dataclasses import dataclass, field

import torch

from .targets.dtypes import FLOAT_DTYPES

PRECISIONS = FLOAT_DTYPES  # the float types an engine may compute in
TARGETS = ("auto", "tensorrt", "reference")
COLLECTIONS = (set, frozenset, list, tuple)
FLAGS = ("require_full_compilation", "truncate_long_and_double", "debug", "pass_through_build_failures",
         "allow_traced_control_flow")


@dataclass
class CompileSettings:
    """Compilation options; names follow Torch-TensorRT's where one exists."""

    enabled_precisions: set = field(default_factory=lambda: {torch.float32})
    min_block_size: int = 5
    torch_executed_ops: set = field(default_factory=set)
    require_full_compilation: bool = False
    workspace_size: int = 1 << 30
    optimization_level: int = 3  # the builder's: 0-5, more build time for faster engines (TensorRT's default is 3)
    truncate_long_and_double: bool = False
    debug: bool = False
    target: str = "auto"
    device: str = "auto"
    # torch_trt.compile only: accept a trace whose Python `if` on tensor data was fixed to the example's branch
    allow_traced_control_flow: bool = False
    # torch.compile(backend="tensorrt") only:
    pass_through_build_failures: bool = False  # raise instead of running an uncompilable graph in PyTorch
    dynamic_shape_max: int | None = None  # upper bound of every dynamic dim (default: see backend/dynamic_shapes.py)

    def __post_init__(self):
        for name in FLAGS:
            _require(name, getattr(self, name), bool, "True or False")
        self.enabled_precisions = _precisions(self.enabled_precisions)
        self.torch_executed_ops = _operator_names(self.torch_executed_ops)
        _require("min_block_size", self.min_block_size, int, "an int >= 1")
        if self.min_block_size < 1:
            raise ValueError(f"min_block_size must be >= 1, got {self.min_block_size}")
        _require("optimization_level", self.optimization_level, int, "an int from 0 to 5")
        if not 0 <= self.optimization_level <= 5:
            raise ValueError(f"optimization_level must be from 0 to 5, got {self.optimization_level}")
        _require("workspace_size", self.workspace_size, int, "a number of bytes (int)")
        if self.workspace_size < 1:
            raise ValueError(f"workspace_size must be a positive number of bytes, got {self.workspace_size}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be 'auto', 'tensorrt' or 'reference', got {self.target!r}")
        _check_device(self.device)
        if self.dynamic_shape_max is not None:
            _require("dynamic_shape_max", self.dynamic_shape_max, int, "a positive int or None")
            if self.dynamic_shape_max < 1:
                raise ValueError(f"dynamic_shape_max must be a positive int or None, got {self.dynamic_shape_max}")

    @classmethod
    def from_options(cls, options):
        """Settings from a dict of option names; unknown names are an error listing the valid ones."""
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise TypeError(f"unknown torch_trt option(s) {unknown}; valid options are: {', '.join(valid)}")
        return cls(**options)

    def resolved_device(self, example_device=None):
        """The device engines run on: explicit, else the example inputs', else CUDA when present."""
        if self.device != "auto":
            device = torch.device(self.device)
        elif example_device is not None:
            device = torch.device(example_device)
        else:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        _check_engine_device(device, "the example inputs' device")
        if device.type == "cuda" and device.index is None:  # engines compare input devices with this one
            device = torch.device("cuda", torch.cuda.current_device())
        return device


def _require(name, value, kind, expected):
    """TypeError naming the option unless `value` is a `kind` (a bool is not an int here)."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise TypeError(f"{name} must be {expected}, got {value!r} ({type(value).__name__})")


def _precisions(value):
    """enabled_precisions as a set of supported dtypes."""
    if not isinstance(value, COLLECTIONS):
        raise TypeError(f"enabled_precisions must be a set of dtypes, e.g. {{torch.float32, torch.float16}}, "
                        f"got {value!r} ({type(value).__name__})")
    precisions = set(value)
    unsupported = precisions - set(PRECISIONS)
    if unsupported:
        raise ValueError(f"enabled_precisions: unsupported {sorted(map(str, unsupported))}; "
                         "use torch.float32, torch.float16 or torch.bfloat16")
    return precisions


def _operator_names(value):
    """torch_executed_ops as a set of operator names PyTorch knows ("aten::relu" or "aten::add.Tensor")."""
    if not isinstance(value, COLLECTIONS):
        raise TypeError(f"torch_executed_ops must be a set of operator names, e.g. {{'aten::relu'}}, "
                        f"got {value!r} ({type(value).__name__})")
    names = set(value)
    for name in sorted(names, key=str):
        if not isinstance(name, str):
            raise TypeError(f"torch_executed_ops entries must be operator names (str), got {name!r}")
        if not _is_known_operator(name):
            raise ValueError(f"torch_executed_ops: {name!r} is not an operator PyTorch knows; give names as "
                             "'aten::relu' (every overload) or 'aten::add.Tensor' (one overload)")
    return names


def _is_known_operator(name):
    """Whether `name` ("ns::op" or "ns::op.overload") has a registered schema."""
    namespace, _, op = name.partition("::")
    if not namespace or not op:
        return False
    op, _, overload = op.partition(".")
    schemas = torch._C._jit_get_schemas_for_operator(f"{namespace}::{op}")
    return any(schema.overload_name == overload for schema in schemas) if overload else bool(schemas)


def _check_device(device):
    """device is "auto", or a CPU or CUDA device: a torch.device or a string torch.device accepts."""
    if device == "auto":
        return
    if not isinstance(device, torch.device):
        _require("device", device, str, "'auto', a device string such as 'cuda:0', or a torch.device")
        try:
            device = torch.device(device)
        except RuntimeError as error:
            raise ValueError(f"device: {error}; use 'auto', 'cpu', 'cuda' or 'cuda:<index>'") from None
    _check_engine_device(device, "device")


def _check_engine_device(device, what):
    """ValueError unless engines can run on `device`, which `what` names."""
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"{what} is {device}, but engines run on the CPU or a CUDA device: use 'cpu', 'cuda' or "
                         "'cuda:<index>' (and example inputs there)")
