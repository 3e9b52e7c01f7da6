"""CompileSettings: the one settings dataclass behind torch_trt.compile and the dynamo backend."""

import dataclasses
from dataclasses import dataclass, field

import torch


@dataclass
class CompileSettings:
    """Compilation options; names follow Torch-TensorRT's where one exists."""

    enabled_precisions: set = field(default_factory=lambda: {torch.float32})
    min_block_size: int = 5
    torch_executed_ops: set = field(default_factory=set)
    require_full_compilation: bool = False
    workspace_size: int = 1 << 30
    truncate_long_and_double: bool = False
    debug: bool = False
    target: str = "auto"
    device: str = "auto"
    # torch.compile(backend="tensorrt") only:
    pass_through_build_failures: bool = False  # raise instead of running an uncompilable graph in PyTorch
    dynamic_shape_max: int | None = None  # upper bound of every dynamic dim (default: see backend/dynamic_shapes.py)

    def __post_init__(self):
        self.enabled_precisions = set(self.enabled_precisions)
        unsupported = self.enabled_precisions - {torch.float32, torch.float16, torch.bfloat16}
        if unsupported:
            raise ValueError(f"enabled_precisions: unsupported {sorted(map(str, unsupported))}; "
                             "use torch.float32, torch.float16 or torch.bfloat16")
        if self.min_block_size < 1:
            raise ValueError(f"min_block_size must be >= 1, got {self.min_block_size}")
        if self.target not in ("auto", "tensorrt", "reference"):
            raise ValueError(f"target must be 'auto', 'tensorrt' or 'reference', got {self.target!r}")
        self.torch_executed_ops = set(self.torch_executed_ops)
        if self.dynamic_shape_max is not None and (not isinstance(self.dynamic_shape_max, int)
                                                   or self.dynamic_shape_max < 1):
            raise ValueError(f"dynamic_shape_max must be a positive int or None, got {self.dynamic_shape_max!r}")

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
        if device.type == "cuda" and device.index is None:  # engines compare input devices with this one
            device = torch.device("cuda", torch.cuda.current_device())
        return device
