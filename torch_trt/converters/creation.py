"""Creation and casting converters: zeros/ones/full (and _like, new_), arange, tensor, aten::to, type_as, tril/triu.

Created tensors of sizes known at build are constants. Sizes known only at run time (of dynamic dims)
make them in the engine: a filled tensor is a one-element constant broadcast by a stride-0 slice of that
size, an arange is a LINSPACE fill, a `torch.tensor` of sizes is their shape tensor, a triangle's mask
compares two aranges. Their `device=` is the engine's (every tensor of an engine lives there).
`aten::to` only casts, and `aten::tensor` only creates: each converts when its device is the engine's own.
"""

import torch

from ..conversion import shape_tensors
from ..conversion.args import Arg
from ..conversion.evaluators import device  # noqa: F401  (registers prim::device, which scripted creation uses)
from ..conversion.registry import converter, converter_table
from ..targets.dtypes import scalar_type
from ._helpers import cast, dtype_of, linspace, rank, triangle_mask

# Casts TensorRT can do inside a network: float64 has no TensorRT type, int8 needs Q/DQ, uint8 is IO-only.
_CASTABLE = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool)


def _dtype_arg(args, default):
    """The `dtype=` argument as a torch dtype, `default` when it is None."""
    return scalar_type(args["dtype"].optional(Arg.to_int)) or default


def _filled(ctx, node, size, value, dtype):
    """A tensor of `size` (ints and runtime ints) filled with `value` in `dtype` (PyTorch's inference when None)."""
    if dtype is not None and dtype not in _CASTABLE:
        raise NotImplementedError(f"a {dtype} tensor cannot be made inside a TensorRT network")
    if not any(shape_tensors.is_runtime(ctx, n) for n in size):
        return ctx.set_output(node, [ctx.constant(torch.full(list(size), value, dtype=dtype))])
    one = ctx.constant(torch.full((1,) * len(size), value, dtype=dtype))
    layer = ctx.net.add_slice(one, (0,) * len(size), (1,) * len(size), (0,) * len(size))  # stride 0 repeats it
    layer.set_input(2, shape_tensors.shape_vector(ctx, size))
    return ctx.set_output(node, layer)


@converter("aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=None) -> Tensor")
def zeros(ctx, node, args):
    """torch.zeros(size)."""
    return _filled(ctx, node, shape_tensors.int_list(ctx, args["size"]), 0, _dtype_arg(args, torch.get_default_dtype()))


@converter("aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=None) -> Tensor")
def ones(ctx, node, args):
    """torch.ones(size)."""
    return _filled(ctx, node, shape_tensors.int_list(ctx, args["size"]), 1, _dtype_arg(args, torch.get_default_dtype()))


@converter("aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=None) -> Tensor")
def full(ctx, node, args):
    """torch.full(size, fill_value); the dtype follows the fill value when not given."""
    return _filled(ctx, node, shape_tensors.int_list(ctx, args["size"]), args["fill_value"].value,
                   _dtype_arg(args, None))


_LIKE = ("Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
         "MemoryFormat? memory_format=None) -> Tensor")


_FILL_VALUE = "fill_value"  # a table value naming the schema's own fill_value argument


def _fill_value(args, value):
    return args["fill_value"].value if value == _FILL_VALUE else value


def _like(ctx, node, args, value):
    x = args[0].itensor()
    return _filled(ctx, node, shape_tensors.shape_of(ctx, x), _fill_value(args, value),
                   _dtype_arg(args, dtype_of(ctx, x)))


converter_table({f"aten::zeros_like({_LIKE}": 0, f"aten::ones_like({_LIKE}": 1,
                 f"aten::full_like(Tensor self, Scalar fill_value, *, {_LIKE.split('*, ', 1)[1]}": _FILL_VALUE},
                _like, "A tensor shaped like self holding {}.")

_NEW = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"


def _new(ctx, node, args, value):
    dtype = _dtype_arg(args, dtype_of(ctx, args[0].value))
    return _filled(ctx, node, shape_tensors.int_list(ctx, args["size"]), _fill_value(args, value), dtype)


converter_table({f"aten::new_zeros(Tensor self, SymInt[] size, {_NEW}": 0,
                 f"aten::new_ones(Tensor self, SymInt[] size, {_NEW}": 1,
                 f"aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, {_NEW}": _FILL_VALUE},
                _new, "A tensor of `size` in self's dtype holding {}.")


_RANGE = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"


def _arange(ctx, node, args, start, end, step):
    """torch.arange(start, end, step): a constant, or a LINSPACE fill when a bound is a runtime int."""
    if not any(shape_tensors.is_runtime(ctx, v) for v in (start, end, step)):
        values = torch.arange(start, end, step, dtype=_dtype_arg(args, None))
        if values.dtype not in _CASTABLE:
            raise NotImplementedError(f"a {values.dtype} arange cannot be made inside a TensorRT network")
        return ctx.set_output(node, [ctx.constant(values)])
    if any(isinstance(v, float) for v in (start, end, step)):
        raise NotImplementedError("an arange of a runtime size with float bounds: its length rounds at run time")
    dtype = _dtype_arg(args, torch.int64)
    if dtype not in _CASTABLE:
        raise NotImplementedError(f"a {dtype} arange cannot be made inside a TensorRT network")
    span = shape_tensors.arithmetic(ctx, "SUB", end, start)
    shape_tensors.require(ctx, shape_tensors.at_least_zero(ctx, shape_tensors.arithmetic(ctx, "PROD", span, step)),
                          "arange: the bounds are inconsistent with the step's sign")
    # ceil((end - start) / step), never negative: shapes are inferred at sizes the assertion may not hold at
    length = shape_tensors.arithmetic(ctx, "FLOOR_DIV", shape_tensors.arithmetic(ctx, "SUB", start, end), step)
    length = shape_tensors.arithmetic(ctx, "MAX", shape_tensors.arithmetic(ctx, "SUB", 0, length), 0)
    return ctx.set_output(node, [cast(ctx, linspace(ctx, length, start, step), dtype)])


@converter(f"aten::arange(Scalar end, {_RANGE}")
def arange(ctx, node, args):
    """torch.arange(end), with `end` known at build (a constant or a static size)."""
    return _arange(ctx, node, args, 0, args["end"].value, 1)


@converter(f"aten::arange.start(Scalar start, Scalar end, {_RANGE}")
def arange_start(ctx, node, args):
    """torch.arange(start, end)."""
    return _arange(ctx, node, args, args["start"].value, args["end"].value, 1)


@converter(f"aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, {_RANGE}")
def arange_start_step(ctx, node, args):
    """torch.arange(start, end, step)."""
    return _arange(ctx, node, args, args["start"].value, args["end"].value, args["step"].value)


def _tensor_supported(node, settings):
    """torch.tensor(data) converts on the engine's device (see _stays_on_device) and without requires_grad."""
    return _stays_on_device(node, settings) and node.namedInput("requires_grad").toIValue() is False


_TENSOR = "*, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor"


@converter(f"aten::tensor.int(int t, {_TENSOR}", supports=_tensor_supported)
@converter(f"aten::tensor.float(float t, {_TENSOR}", supports=_tensor_supported)
@converter(f"aten::tensor.bool(bool t, {_TENSOR}", supports=_tensor_supported)
@converter(f"aten::tensor(t[] data, {_TENSOR}", supports=_tensor_supported)
def tensor(ctx, node, args):
    """torch.tensor(data) of compile-time numbers (a constant), or of ints and runtime ints (their shape tensor)."""
    data, dtype = args[0].value, _dtype_arg(args, None)
    if shape_tensors.is_runtime(ctx, data):
        return _cast_to(ctx, node, shape_tensors.as_int64(ctx, data), dtype)
    if not isinstance(data, (list, tuple)) or not any(shape_tensors.is_runtime(ctx, v) for v in data):
        values = torch.tensor(data, dtype=dtype)
        return _cast_to(ctx, node, ctx.constant(values), values.dtype)
    if not all(isinstance(v, int) or shape_tensors.is_runtime(ctx, v) for v in data):
        raise NotImplementedError(f"a torch.tensor of runtime sizes and non-ints: {data!r}")
    return _cast_to(ctx, node, shape_tensors.shape_vector(ctx, data), dtype)


def _cast_to(ctx, node, x, dtype):
    """`x` as `dtype` (unchanged when None), refusing casts TensorRT cannot do inside a network."""
    if dtype is not None and dtype not in _CASTABLE:
        raise NotImplementedError(f"a cast to {dtype} cannot run inside a TensorRT network (it takes "
                                  f"{', '.join(str(d) for d in _CASTABLE)})")
    return ctx.set_output(node, [x if dtype is None else cast(ctx, x, dtype)])


def _stays_on_device(node, settings):
    """aten::to with a device argument converts when that device is the engine's: None, the prim::device of a
    tensor (every engine tensor lives on the engine's device), or a constant naming the device the settings
    resolve to (a traced graph records its example's device, and compile traces on the engine's device)."""
    value = node.namedInput("device")
    if value.node().kind() == "prim::device":
        return True
    if value.node().kind() != "prim::Constant":
        return False
    wanted = value.toIValue()
    if wanted is None:
        return True
    wanted, engine = torch.device(wanted), settings.resolved_device()
    return wanted.type == engine.type and wanted.index in (None, engine.index)


@converter("aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
           "MemoryFormat? memory_format=None) -> Tensor(a)")
def to_dtype(ctx, node, args):
    """x.to(dtype)."""
    return _cast_to(ctx, node, args[0].itensor(), scalar_type(args["dtype"].to_int()))


@converter("aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
           "MemoryFormat? memory_format=None) -> Tensor(a)", supports=_stays_on_device)
@converter("aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
           "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", supports=_stays_on_device)
@converter("aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, "
           "bool copy=False) -> Tensor(b|a)", supports=_stays_on_device)
def to_device(ctx, node, args):
    """x.to(device, dtype) where device is the engine's (see _stays_on_device): a cast, or nothing."""
    return _cast_to(ctx, node, args[0].itensor(), scalar_type(args["dtype"].optional(Arg.to_int)))


@converter("aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
           "MemoryFormat? memory_format=None) -> Tensor(a)")
def to_other(ctx, node, args):
    """self in other's dtype (type_as too, which lowering rewrites as this)."""
    return _cast_to(ctx, node, args[0].itensor(), dtype_of(ctx, args[1].value))


def _triangle(ctx, node, args, lower):
    """Zero the elements outside the triangle: a mask over the last two dims and a select."""
    x = args[0].itensor()
    if rank(x) < 2:
        raise ValueError(f"{node.kind()} needs a tensor of rank >= 2, got rank {rank(x)}")
    rows, columns = (shape_tensors.dim_size(ctx, x, d) for d in (rank(x) - 2, rank(x) - 1))
    mask = triangle_mask(ctx, rows, columns, args["diagonal"].value, lower, rank(x))
    zero = ctx.constant(torch.zeros((1,) * rank(x), dtype=dtype_of(ctx, x)))
    return ctx.set_output(node, ctx.net.add_select(mask, x, zero))


@converter("aten::tril(Tensor self, SymInt diagonal=0) -> Tensor")
def tril(ctx, node, args):
    """The lower triangle of the last two dims, from `diagonal` down."""
    return _triangle(ctx, node, args, lower=True)


@converter("aten::triu(Tensor self, SymInt diagonal=0) -> Tensor")
def triu(ctx, node, args):
    """The upper triangle of the last two dims, from `diagonal` up."""
    return _triangle(ctx, node, args, lower=False)
