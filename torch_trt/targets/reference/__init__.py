"""The reference target: TensorRT's Python API implemented in PyTorch, for CPU and CUDA.

Same class, method, argument and enum-member names as `tensorrt` 11.4, the same rules and
refusals; executes networks layer by layer with PyTorch ops. It is the target CI exercises and
the living specification of what converters may rely on.
"""

from .layers import LAYER_CLASSES as _LAYER_CLASSES
from .builder import Builder, IBuilderConfig, IOptimizationProfile
from .engine import ICudaEngine, IExecutionContext, Runtime
from .enums import (ActivationType, BuilderFlag, DataType, ElementWiseOperation, ExecutionContextAllocationStrategy,
                    GatherMode, InterpolationMode, LayerType, MatrixOperation, MemoryPoolType,
                    NetworkDefinitionCreationFlag, PaddingMode, PoolingType, ProfilingVerbosity, ReduceOperation,
                    ResizeCoordinateTransformation, ResizeRoundMode, ResizeSelector, SampleMode, ScaleMode,
                    ScatterMode, TensorIOMode, TensorLocation, TopKOperation, UnaryOperation, FillOperation,
                    CumulativeOperation, LayerInformationFormat, ErrorCodeTRT)
from .logger import IErrorRecorder, ILogger, Logger
from .network import ILayer, INetworkDefinition, ITensor
from .types import Dims, IHostMemory, Permutation, Weights, nptype, volume

__version__ = "11.4.0"
globals().update(_LAYER_CLASSES)  # IActivationLayer, IShuffleLayer, ...: one name per layer module

float32, float16, bfloat16 = DataType.FLOAT, DataType.HALF, DataType.BF16
int8, int32, int64, uint8, fp8 = DataType.INT8, DataType.INT32, DataType.INT64, DataType.UINT8, DataType.FP8
bool = DataType.BOOL  # noqa: A001  (tensorrt exposes trt.bool)
