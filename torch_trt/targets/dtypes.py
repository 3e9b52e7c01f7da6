"""The one dtype table: torch dtypes, TensorRT DataType members, numpy types and TorchScript ScalarType codes.

Every part of torch_trt (both targets, conversion, partitioning, lowering, runtime) translates dtypes
here. DataType members are looked up by name on the target's own `DataType` (real `tensorrt` or the
reference), so one table serves either target; `trt_dtype`/`torch_dtype` take the target's API module.
"""

import numpy as np
import torch

# torch dtype -> the name of the TensorRT DataType member holding the same values.
DATATYPE_NAMES = {torch.float32: "FLOAT", torch.float16: "HALF", torch.bfloat16: "BF16", torch.int8: "INT8",
                  torch.int32: "INT32", torch.int64: "INT64", torch.bool: "BOOL", torch.uint8: "UINT8",
                  torch.float8_e4m3fn: "FP8"}
# torch dtype -> numpy type, for the DataTypes numpy has (tensorrt's nptype and Weights: no BF16, no FP8).
NUMPY_TYPES = {torch.float32: np.float32, torch.float16: np.float16, torch.int8: np.int8, torch.int32: np.int32,
               torch.int64: np.int64, torch.bool: np.bool_, torch.uint8: np.uint8}
# torch dtype -> TorchScript's ScalarType code (c10::ScalarType), as `dtype=` arguments and prim::dtype carry it.
SCALAR_TYPE_CODES = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
                     torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15}

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)  # TensorRT's FLOAT, HALF and BF16
HALF_DTYPES = (torch.float16, torch.bfloat16)  # reduced precision: PyTorch computes many ops on them in float32
INDEX_DTYPES = (torch.int32, torch.int64)  # indices and shape tensors: INT32 or INT64
# Tensor dtypes engines compute in and take as IO. int64 is a native IO and compute type of TensorRT 10+, so it
# enters engines as it is; float64 does not, unless truncate_long_and_double narrows it (and int64) at the boundary.
ENGINE_DTYPES = FLOAT_DTYPES + INDEX_DTYPES + (torch.bool, torch.int8, torch.uint8)
TRUNCATED_DTYPES = {torch.int64: torch.int32, torch.float64: torch.float32}


def trt_dtype(trt, dtype):
    """The DataType of target `trt` (its API module) for a torch dtype."""
    if dtype not in DATATYPE_NAMES:
        raise TypeError(f"{dtype} has no TensorRT equivalent")
    return getattr(trt.DataType, DATATYPE_NAMES[dtype])


def torch_dtype(trt, datatype):
    """The torch dtype of a DataType of target `trt` (its API module)."""
    for dtype, name in DATATYPE_NAMES.items():
        if getattr(trt.DataType, name, None) == datatype:
            return dtype
    raise TypeError(f"{datatype} has no torch equivalent")


def scalar_type(code):
    """The torch dtype of a TorchScript ScalarType code (how `dtype=` arguments arrive), None for None."""
    if code is None:
        return None
    for dtype, known in SCALAR_TYPE_CODES.items():
        if known == code:
            return dtype
    raise TypeError(f"ScalarType code {code} has no supported torch dtype")
