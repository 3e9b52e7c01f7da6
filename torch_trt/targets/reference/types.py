"""Dims, Permutation, Weights, IHostMemory, and the DataType <-> torch/numpy tables built from ..dtypes."""

import ctypes
import mmap

import numpy as np
import torch

from ..dtypes import DATATYPE_NAMES, NUMPY_TYPES
from .enums import DataType

TORCH_DTYPE = {getattr(DataType, name): dtype for dtype, name in DATATYPE_NAMES.items()}
TRT_DTYPE = {dtype: datatype for datatype, dtype in TORCH_DTYPE.items()}
_NUMPY_DTYPE = {TRT_DTYPE[dtype]: numpy_type for dtype, numpy_type in NUMPY_TYPES.items()}
_ITEMSIZE = {datatype: dtype.itemsize for datatype, dtype in TORCH_DTYPE.items()}
DataType.itemsize = property(lambda member: _ITEMSIZE.get(member))


def nptype(trt_type):
    """The numpy type of a DataType; TypeError for types numpy lacks, as in tensorrt."""
    if trt_type not in _NUMPY_DTYPE:
        raise TypeError(f"Could not resolve TensorRT datatype to an equivalent numpy datatype: {trt_type}")
    return _NUMPY_DTYPE[trt_type]


def volume(iterable):
    """Product of the elements; 1 for an empty iterable."""
    result = 1
    for value in iterable:
        result *= value
    return result


class Dims(tuple):
    """A tuple of at most MAX_DIMS int64 extents, -1 for a dynamic dim; unhashable like the binding."""

    MAX_DIMS = 8
    __hash__ = None

    def __new__(cls, shape=()):
        values = tuple(int(v) for v in shape)
        if len(values) > cls.MAX_DIMS:
            raise ValueError(f"Dims may hold at most {cls.MAX_DIMS} entries, got {len(values)}")
        return super().__new__(cls, values)

    def __eq__(self, other):  # the binding compares equal to lists and tuples alike
        return tuple(self) == tuple(other) if isinstance(other, (tuple, list)) else NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __repr__(self):
        return "(" + ", ".join(str(v) for v in self) + ("," if len(self) == 1 else "") + ")"


class Permutation(tuple):
    """A permutation of up to 8 axes; reads back padded with zeros to 8 entries like the binding."""

    __hash__ = None

    def __new__(cls, order=()):
        values = tuple(int(v) for v in order)
        if len(values) > Dims.MAX_DIMS:
            raise ValueError(f"Permutation may hold at most {Dims.MAX_DIMS} entries")
        return super().__new__(cls, values + (0,) * (Dims.MAX_DIMS - len(values)))


def to_dims(value, what):
    """Accept what pybind11 converts to Dims (any sequence of ints, a 1-D integer array), reject anything else."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        value = value.tolist()
    if isinstance(value, (Dims, tuple, list)) and all(isinstance(v, (int, np.integer)) for v in value):
        return Dims(value)
    raise TypeError(f"{what}: incompatible function arguments, expected Dims (a sequence of ints), got {value!r}")


class Weights:
    """Host weights typed by DataType: a flat, contiguous numpy array, `count` elements copied from host address
    `ptr` (the binding reads the caller's memory; the reference copies it, so any DataType works, BF16 included),
    or empty."""

    def __init__(self, a=DataType.FLOAT, ptr=None, count=None, *, type=None):  # noqa: A002  (the binding's `type`)
        a = a if type is None else type
        self._tensor = None
        if isinstance(a, np.ndarray):
            if a.dtype == np.float64:
                raise ValueError("float64 weights are not supported by TensorRT; convert to float32 first")
            if not a.flags["C_CONTIGUOUS"]:
                raise ValueError("Weights must be contiguous; use np.ascontiguousarray")
            by_numpy = {np.dtype(v): k for k, v in _NUMPY_DTYPE.items()}
            if a.dtype not in by_numpy:
                raise TypeError(f"Unsupported numpy dtype for Weights: {a.dtype}")
            self._array, self._dtype = a.reshape(-1), by_numpy[a.dtype]
        else:
            self._array, self._dtype = None, DataType(int(a))
            if ptr is not None:
                self._tensor = _copy_from_host(TORCH_DTYPE[self._dtype], int(ptr), int(count))

    @property
    def dtype(self):
        return self._dtype

    @property
    def size(self):
        if self._tensor is not None:
            return self._tensor.numel()
        return 0 if self._array is None else self._array.size

    @property
    def nbytes(self):
        return self.size * self._dtype.itemsize

    def numpy(self):
        if self._tensor is not None:
            if self._dtype not in _NUMPY_DTYPE:
                raise TypeError(f"numpy has no {self._dtype.name} type; these weights have no numpy view")
            return self._tensor.numpy()
        return self._array

    def _as_torch(self):
        """The values as a torch tensor over the same memory (read when the engine is built, as TensorRT reads the
        caller's weights then), or None for empty Weights."""
        if self._tensor is not None or self._array is None:
            return self._tensor
        return torch.from_numpy(self._array if self._array.flags.writeable else self._array.copy())


def _copy_from_host(dtype, address, count):
    """`count` elements of `dtype` read from host memory at `address`."""
    values = torch.empty(count, dtype=dtype)
    ctypes.memmove(values.data_ptr(), address, count * values.element_size())
    return values


def to_weights(value, what):
    """Accept Weights or a numpy array (pybind11's implicit conversion); None for an omitted optional."""
    if value is None or isinstance(value, Weights):
        return value
    if isinstance(value, np.ndarray):
        return Weights(value)
    raise TypeError(f"{what}: expected Weights or a numpy array, got {type(value).__name__}")


class IHostMemory(mmap.mmap):
    """Serialized bytes with the buffer protocol, as returned by build_serialized_network: the buffer the plan is
    written into (a transformer's plan is hundreds of MB, each copy of it a second on a slow host). It is anonymous
    memory, which the kernel zeroes a page at a time as the plan is written, where a bytearray is zeroed whole
    first: a 440 MB plan (BERT-base, float32) was written in 0.19 s instead of 0.38 s on a 2-core host."""

    def __new__(cls, size):
        return super().__new__(cls, -1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)

    @property
    def nbytes(self):
        return len(self)

    @property
    def dtype(self):
        return DataType.UINT8
