"""Input: the shape (static, or min/opt/max) and dtype of one compiled-module input."""

from dataclasses import dataclass

import torch

from .targets.dtypes import ENGINE_DTYPES

SUPPORTED_DTYPES = ENGINE_DTYPES + (torch.float64,)  # float64 enters engines narrowed (truncate_long_and_double)


@dataclass(frozen=True, init=False)
class Input:
    """`Input((1, 3, 224, 224))` or `Input(min_shape=..., opt_shape=..., max_shape=...)`, with a dtype."""

    min_shape: tuple
    opt_shape: tuple
    max_shape: tuple
    dtype: torch.dtype

    def __init__(self, shape=None, dtype=torch.float32, *, min_shape=None, opt_shape=None, max_shape=None):
        ranges = (min_shape, opt_shape, max_shape)
        if shape is not None and any(r is not None for r in ranges):
            raise ValueError("Input: give either `shape` or `min_shape`/`opt_shape`/`max_shape`, not both")
        if shape is None and any(r is None for r in ranges):
            raise ValueError("Input: a dynamic input needs all of `min_shape`, `opt_shape` and `max_shape`")
        if shape is not None:
            ranges = (shape, shape, shape)
        ranges = tuple(_as_shape(r) for r in ranges)
        if len({len(r) for r in ranges}) != 1:
            raise ValueError(f"Input: min/opt/max shapes must have the same rank, got {ranges}")
        for low, mid, high in zip(*ranges):
            if not low <= mid <= high:
                raise ValueError(f"Input: need min <= opt <= max in every dim, got min={ranges[0]} "
                                 f"opt={ranges[1]} max={ranges[2]}")
        if dtype not in SUPPORTED_DTYPES:
            raise ValueError(f"Input: unsupported dtype {dtype}; use one of {', '.join(map(str, SUPPORTED_DTYPES))}")
        object.__setattr__(self, "min_shape", ranges[0])
        object.__setattr__(self, "opt_shape", ranges[1])
        object.__setattr__(self, "max_shape", ranges[2])
        object.__setattr__(self, "dtype", dtype)

    @classmethod
    def from_tensor(cls, tensor):
        """The static Input describing an example tensor."""
        return cls(tuple(tensor.shape), dtype=tensor.dtype)

    @property
    def is_dynamic(self):
        return self.min_shape != self.max_shape

    @property
    def shape(self):
        """Declared shape with -1 for each dim that varies between min and max."""
        return tuple(-1 if lo != hi else lo for lo, hi in zip(self.min_shape, self.max_shape))

    def example(self, which="opt", device="cpu"):
        """A tensor of the min, opt or max shape, for tracing and shape analysis.

        Integer and bool inputs are zeros: they are often indices, and 0 is valid for any non-empty dim
        (a random index can be out of range, which on CUDA is a device-side assert that poisons the process).
        """
        shape = getattr(self, f"{which}_shape")
        if self.dtype.is_floating_point:
            return torch.randn(shape, dtype=self.dtype, device=device)
        return torch.zeros(shape, dtype=self.dtype, device=device)


def shapes_by_turns(specs, first):
    """Per spec, its shape with the dynamic dims taking their min and max sizes by turns across the specs, the first
    one `first` ("min" or "max"): corners of the profiles that their min and max shapes leave out, where sizes that
    are equal there differ (x.size(1) - y.size(1) of two like Inputs is widest with x at max and y at min)."""
    turn, shapes = int(first == "max"), []
    for spec in specs:
        shape = []
        for low, high in zip(spec.min_shape, spec.max_shape):
            shape.append(low if low == high or turn % 2 == 0 else high)
            turn += low != high
        shapes.append(tuple(shape))
    return shapes


def dynamic_dim_count(specs):
    """How many dims vary across the specs."""
    return sum(low != high for spec in specs for low, high in zip(spec.min_shape, spec.max_shape))


def _as_shape(shape):
    if isinstance(shape, torch.Size):
        shape = tuple(shape)
    if not isinstance(shape, (tuple, list)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise ValueError(f"Input: a shape must be a tuple of ints, got {shape!r}")
    if any(d <= 0 for d in shape):
        raise ValueError(f"Input: dims must be positive, got {tuple(shape)}")
    return tuple(shape)
