"""Runtime ints: sizes of dynamic dims, and arithmetic on them, as shape tensors inside the engine.

An int known only when the engine runs (the size of a dynamic dim, or arithmetic on one) is a 0-D INT64
ITensor, the type of IShapeLayer's output, computed by shape layers, gathers and element-wise layers as
TensorRT computes shapes. A list of ints where some are such ITensors becomes a 1-D INT64 shape tensor
(`shape_vector`) for the inputs that take one: a shuffle's reshape dims, a slice's start and size, a fill's
dimensions. Every helper takes Python ints and runtime ints alike and gives a Python int when all operands
are ints, so what constants and static dims decide stays a compile-time int.
"""

import operator

import torch

_FOLD = {"SUM": operator.add, "SUB": operator.sub, "PROD": operator.mul, "FLOOR_DIV": operator.floordiv,
         "MIN": min, "MAX": max, "EQUAL": operator.eq}


def is_runtime(ctx, value):
    """Whether `value` is a runtime int (an ITensor) rather than a Python int."""
    return isinstance(value, ctx.trt.ITensor)


def as_int64(ctx, value):
    """A 0-D INT64 ITensor of a Python int, or of a 0-D integer ITensor."""
    if not is_runtime(ctx, value):
        return ctx.constant(torch.tensor(int(value), dtype=torch.int64))
    if len(value.shape) != 0 or value.dtype not in (ctx.trt.int32, ctx.trt.int64):
        raise TypeError(f"a runtime int must be a 0-D integer tensor, got {value.dtype} of shape {tuple(value.shape)}")
    return value if value.dtype == ctx.trt.int64 else ctx.net.add_cast(value, ctx.trt.int64).get_output(0)


def dim_size(ctx, tensor, dim):
    """The size of `dim` of an ITensor: an int when static, else a runtime int read from its shape."""
    size = tensor.shape[dim]
    if size != -1:
        return size
    shape = ctx.net.add_shape(tensor).get_output(0)
    index = ctx.constant(torch.tensor(dim, dtype=torch.int32))
    return ctx.net.add_gather(shape, index, 0).get_output(0)


def shape_of(ctx, tensor):
    """Every dim's size of an ITensor (ints for static dims, runtime ints for dynamic ones)."""
    return [dim_size(ctx, tensor, dim) for dim in range(len(tensor.shape))]


def arithmetic(ctx, operation, a, b):
    """`a <operation> b` (an ElementWiseOperation name in _FOLD) on ints or runtime ints; FLOOR_DIV floors, EQUAL
    gives a bool or a BOOL runtime value."""
    if not is_runtime(ctx, a) and not is_runtime(ctx, b):
        return _FOLD[operation](a, b)
    operation = getattr(ctx.trt.ElementWiseOperation, operation)
    return ctx.net.add_elementwise(as_int64(ctx, a), as_int64(ctx, b), operation).get_output(0)


def at_least_zero(ctx, value):
    """`value >= 0` of an int or runtime int: a bool, or a BOOL runtime value (max(value, 0) == value)."""
    return arithmetic(ctx, "EQUAL", arithmetic(ctx, "MAX", value, 0), value)


def require(ctx, condition, message):
    """Hold `condition` (a bool, or a BOOL runtime value) where eager raises unless it holds: false at build, a
    ValueError; known only at run time, an IAssertionLayer that fails the engine's run with `message`."""
    if is_runtime(ctx, condition):
        ctx.net.add_assertion(condition, message)
    elif not condition:
        raise ValueError(message)


def remainder(ctx, a, b):
    """Python's `a % b` (the divisor's sign): a - floor(a / b) * b."""
    return arithmetic(ctx, "SUB", a, arithmetic(ctx, "PROD", arithmetic(ctx, "FLOOR_DIV", a, b), b))


def wrap_negative(ctx, position, size):
    """PyTorch's reading of a position along a dim of `size`: a negative one counts from the end."""
    if not is_runtime(ctx, position):
        return arithmetic(ctx, "SUM", position, size) if position < 0 else position
    position = as_int64(ctx, position)
    negative = ctx.net.add_elementwise(position, as_int64(ctx, 0), ctx.trt.ElementWiseOperation.LESS).get_output(0)
    negative = ctx.net.add_cast(negative, ctx.trt.int64).get_output(0)
    return arithmetic(ctx, "SUM", position, arithmetic(ctx, "PROD", negative, size))


def shape_vector(ctx, values):
    """A 1-D INT64 shape tensor of ints and runtime ints: runs of ints are one constant, the rest concatenated."""
    pieces, run = [], []
    for value in list(values) + [None]:
        if value is not None and not is_runtime(ctx, value):
            run.append(int(value))
            continue
        if run:
            pieces.append(ctx.constant(torch.tensor(run, dtype=torch.int64)))
            run = []
        if value is not None:
            layer = ctx.net.add_shuffle(as_int64(ctx, value))
            layer.reshape_dims = (1,)
            pieces.append(layer.get_output(0))
    if len(pieces) == 1:
        return pieces[0]
    layer = ctx.net.add_concatenation(pieces)
    layer.axis = 0
    return layer.get_output(0)


def reshape_to_shape_tensor(ctx, tensor, sizes):
    """`tensor` reshaped to PyTorch's `sizes` (ints and runtime ints, one -1 inferred) through a shape tensor."""
    layer = ctx.net.add_shuffle(tensor)
    layer.set_input(1, shape_vector(ctx, sizes))
    layer.zero_is_placeholder = False  # a 0 is a zero-length dim, as in PyTorch
    return layer.get_output(0)


def int_list(ctx, arg):
    """An int[] argument as a list of ints and runtime ints (a single int stands for a one-element list)."""
    value = arg.value
    if arg.is_itensor() or isinstance(value, int):
        return [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) or is_runtime(ctx, v) for v in value):
        raise TypeError(f"argument '{arg.name}' must be a list of ints, got {value!r}")
    return list(value)
