"""TensorRT's enums as pybind11 enums: members compare equal only to members of the same enum.

`DataType.HALF == 1` is False, `1 << member` raises TypeError and enum classes are not
iterable (use `__members__`), as with the real bindings; bitmasks are written `1 << int(member)`.
Member values are those of TensorRT 11.4.
"""


class _EnumType(type):
    """Metaclass: calling an enum with an int looks up the member, as pybind11 does."""

    def __call__(cls, value):
        for member in cls.__members__.values():
            if member.value == value:
                return member
        raise ValueError(f"{value!r} is not a valid {cls.__name__}")


class _Enum(metaclass=_EnumType):
    __slots__ = ("name", "value")

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        return type(other) is type(self) and other.value == self.value

    def __hash__(self):
        return hash((type(self).__name__, self.value))

    def __repr__(self):
        return f"<{type(self).__name__}.{self.name}: {self.value}>"

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"


def member(enum, value, what):
    """`value`, which must be a member of `enum`: pybind11 refuses an int or another enum's member with a TypeError."""
    if type(value) is not enum:
        raise TypeError(f"{what}: expected a tensorrt.{enum.__name__}, got {value!r}")
    return value


def _enum(name, **members):
    cls = _EnumType(name, (_Enum,), {"__module__": __name__, "__slots__": ()})
    cls.__members__ = {}
    for member_name, value in members.items():
        member = object.__new__(cls)
        member.name, member.value = member_name, value
        cls.__members__[member_name] = member
        setattr(cls, member_name, member)
    return cls


DataType = _enum("DataType", FLOAT=0, HALF=1, BF16=7, INT8=2, INT32=3, INT64=8, BOOL=4, UINT8=5, FP8=6, INT4=9, FP4=10, E8M0=11)
ActivationType = _enum("ActivationType", RELU=0, SIGMOID=1, TANH=2, LEAKY_RELU=3, ELU=4, SELU=5, SOFTSIGN=6, SOFTPLUS=7, CLIP=8, HARD_SIGMOID=9, SCALED_TANH=10, THRESHOLDED_RELU=11, GELU_ERF=12, GELU_TANH=13)
ElementWiseOperation = _enum("ElementWiseOperation", SUM=0, PROD=1, MAX=2, MIN=3, SUB=4, DIV=5, POW=6, FLOOR_DIV=7, AND=8, OR=9, XOR=10, EQUAL=11, GREATER=12, LESS=13)
UnaryOperation = _enum("UnaryOperation", EXP=0, LOG=1, SQRT=2, RECIP=3, ABS=4, NEG=5, SIN=6, COS=7, TAN=8, SINH=9, COSH=10, ASIN=11, ACOS=12, ATAN=13, ASINH=14, ACOSH=15, ATANH=16, CEIL=17, FLOOR=18, ERF=19, NOT=20, SIGN=21, ROUND=22, ISINF=23, ISNAN=24)
ReduceOperation = _enum("ReduceOperation", SUM=0, PROD=1, MAX=2, MIN=3, AVG=4, NONE=5)
PoolingType = _enum("PoolingType", MAX=0, AVERAGE=1, MAX_AVERAGE_BLEND=2)
PaddingMode = _enum("PaddingMode", EXPLICIT_ROUND_DOWN=0, EXPLICIT_ROUND_UP=1, SAME_UPPER=2, SAME_LOWER=3)
MatrixOperation = _enum("MatrixOperation", NONE=0, TRANSPOSE=1, VECTOR=2)
ScaleMode = _enum("ScaleMode", UNIFORM=0, CHANNEL=1, ELEMENTWISE=2)
SampleMode = _enum("SampleMode", STRICT_BOUNDS=0, WRAP=1, CLAMP=2, FILL=3, REFLECT=4)
GatherMode = _enum("GatherMode", DEFAULT=0, ELEMENT=1, ND=2)
TensorIOMode = _enum("TensorIOMode", NONE=0, INPUT=1, OUTPUT=2)
LayerType = _enum("LayerType", CONVOLUTION=0, GRID_SAMPLE=42, NMS=43, ACTIVATION=2, POOLING=3, LRN=4, SCALE=5, SOFTMAX=6, DECONVOLUTION=7, CONCATENATION=8, ELEMENTWISE=9, PLUGIN=10, UNARY=11, PADDING=12, SHUFFLE=13, REDUCE=14, TOPK=15, GATHER=16, MATRIX_MULTIPLY=17, RAGGED_SOFTMAX=18, CONSTANT=19, IDENTITY=20, CAST=1, PLUGIN_V2=21, SLICE=22, SHAPE=23, PARAMETRIC_RELU=24, RESIZE=25, TRIP_LIMIT=26, RECURRENCE=27, ITERATOR=28, LOOP_OUTPUT=29, SELECT=30, ASSERTION=39, FILL=31, QUANTIZE=32, DEQUANTIZE=33, CONDITION=34, CONDITIONAL_INPUT=35, CONDITIONAL_OUTPUT=36, SCATTER=37, EINSUM=38, ONE_HOT=40, NON_ZERO=41, REVERSE_SEQUENCE=44, NORMALIZATION=45, PLUGIN_V3=46, SQUEEZE=47, UNSQUEEZE=48, CUMULATIVE=49, DYNAMIC_QUANTIZE=50, ATTENTION_INPUT=51, ATTENTION_OUTPUT=52, ROTARY_EMBEDDING=53, KV_CACHE_UPDATE=54, MOE=55, DIST_COLLECTIVE=56)
MemoryPoolType = _enum("MemoryPoolType", WORKSPACE=0, DLA_MANAGED_SRAM=1, DLA_LOCAL_DRAM=2, DLA_GLOBAL_DRAM=3, TACTIC_DRAM=4, TACTIC_SHARED_MEMORY=5)
NetworkDefinitionCreationFlag = _enum("NetworkDefinitionCreationFlag", STRONGLY_TYPED=0, PREFER_AOT_PYTHON_PLUGINS=2, PREFER_JIT_PYTHON_PLUGINS=1)
BuilderFlag = _enum("BuilderFlag", DEBUG=2, GPU_FALLBACK=3, REFIT=4, DISABLE_TIMING_CACHE=5, EDITABLE_TIMING_CACHE=26, TF32=6, SPARSE_WEIGHTS=7, SAFETY_SCOPE=8, DIRECT_IO=11, VERSION_COMPATIBLE=12, EXCLUDE_LEAN_RUNTIME=13, ERROR_ON_TIMING_CACHE_MISS=15, DISABLE_COMPILATION_CACHE=17, STRIP_PLAN=18, REFIT_IDENTICAL=19, WEIGHT_STREAMING=20, REFIT_INDIVIDUAL=22, STRICT_NANS=23, MONITOR_MEMORY=24, DISTRIBUTIVE_INDEPENDENCE=27)
TensorLocation = _enum("TensorLocation", DEVICE=0, HOST=1)
ExecutionContextAllocationStrategy = _enum("ExecutionContextAllocationStrategy", STATIC=0, ON_PROFILE_CHANGE=1, USER_MANAGED=2)
ProfilingVerbosity = _enum("ProfilingVerbosity", LAYER_NAMES_ONLY=0, DETAILED=2, NONE=1)
LayerInformationFormat = _enum("LayerInformationFormat", ONELINE=0, JSON=1)
TopKOperation = _enum("TopKOperation", MAX=0, MIN=1)
InterpolationMode = _enum("InterpolationMode", NEAREST=0, LINEAR=1, CUBIC=2)
ResizeCoordinateTransformation = _enum("ResizeCoordinateTransformation", ALIGN_CORNERS=0, ASYMMETRIC=1, HALF_PIXEL=2)
ResizeSelector = _enum("ResizeSelector", FORMULA=0, UPPER=1)
ResizeRoundMode = _enum("ResizeRoundMode", HALF_UP=0, HALF_DOWN=1, FLOOR=2, CEIL=3)
FillOperation = _enum("FillOperation", LINSPACE=0, RANDOM_UNIFORM=1, RANDOM_NORMAL=2)
CumulativeOperation = _enum("CumulativeOperation", SUM=0)
ScatterMode = _enum("ScatterMode", ELEMENT=0, ND=1)
ErrorCodeTRT = _enum("ErrorCodeTRT", SUCCESS=0, UNSPECIFIED_ERROR=1, INTERNAL_ERROR=2, INVALID_ARGUMENT=3,
                     INVALID_CONFIG=4, FAILED_ALLOCATION=5, FAILED_INITIALIZATION=6, FAILED_EXECUTION=7,
                     FAILED_COMPUTATION=8, INVALID_STATE=9, UNSUPPORTED_STATE=10)
Severity = _enum("Severity", INTERNAL_ERROR=0, ERROR=1, WARNING=2, INFO=3, VERBOSE=4)
