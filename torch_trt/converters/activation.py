"""Activation converters: IActivationLayers with alpha/beta from the schema's arguments, and the activations
built from them and element-wise layers (hardswish, mish, prelu, glu, log_sigmoid, ...)."""

from ..conversion.registry import converter, converter_table
from ._helpers import (as_float, cast, clamped, dtype_of, elementwise, in_float32, normalize_dim, rank,
                       reshape_trt_dims)
from ._math import log1p


def _activation(ctx, node, x, kind, alpha=0.0, beta=0.0):
    layer = ctx.net.add_activation(x.itensor(), kind)
    layer.alpha, layer.beta = alpha, beta
    return ctx.set_output(node, layer)


@converter("aten::relu(Tensor self) -> Tensor")
def relu(ctx, node, args):
    """ActivationType.RELU, integers included (TensorRT takes INT32 and INT64 for RELU alone)."""
    return _activation(ctx, node, args[0], ctx.trt.ActivationType.RELU)


_FLOAT_ACTIVATIONS = {
    "aten::sigmoid(Tensor self) -> Tensor": "SIGMOID",
    "aten::tanh(Tensor self) -> Tensor": "TANH",
}


def _float_activation(ctx, node, args, kind):
    layer = ctx.net.add_activation(as_float(ctx, args[0].itensor()), getattr(ctx.trt.ActivationType, kind))
    return ctx.set_output(node, layer)


converter_table(_FLOAT_ACTIVATIONS, _float_activation, "ActivationType.{}; integers compute in float32, as PyTorch "
                "promotes them.")


@converter('aten::gelu(Tensor self, *, str approximate="none") -> Tensor')
def gelu(ctx, node, args):
    """GELU, exact (erf) or tanh approximation."""
    kind = "GELU_TANH" if args["approximate"].to_str() == "tanh" else "GELU_ERF"
    return _activation(ctx, node, args[0], getattr(ctx.trt.ActivationType, kind))


def _clip(ctx, node, x, low, high):
    """ActivationType.CLIP for floats; integers, which CLIP does not take, clamp exactly with element-wise MAX and
    MIN, the bounds truncated to integers as PyTorch converts them."""
    if dtype_of(ctx, x.itensor()).is_floating_point:
        return _activation(ctx, node, x, ctx.trt.ActivationType.CLIP, low, high)
    return ctx.set_output(node, [clamped(ctx, x.itensor(), int(low), int(high))])


@converter("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")
def hardtanh(ctx, node, args):
    """Clip to [min_val, max_val]."""
    return _clip(ctx, node, args[0], args[1].to_float(), args[2].to_float())


@converter("aten::relu6(Tensor self) -> Tensor")
def relu6(ctx, node, args):
    """Clip to [0, 6]."""
    return _clip(ctx, node, args[0], 0.0, 6.0)


@converter("aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor")
def leaky_relu(ctx, node, args):
    """x if x >= 0 else slope * x."""
    return _activation(ctx, node, args[0], ctx.trt.ActivationType.LEAKY_RELU, args[1].to_float())


def _unscaled(node, settings):
    """TensorRT's ELU has alpha only: elu with scale or input_scale != 1 (selu's form) runs in PyTorch."""
    return node.namedInput("scale").toIValue() == 1 and node.namedInput("input_scale").toIValue() == 1


@converter("aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", supports=_unscaled)
def elu(ctx, node, args):
    """ELU (scale == input_scale == 1, see _unscaled)."""
    return _activation(ctx, node, args[0], ctx.trt.ActivationType.ELU, args["alpha"].to_float())


@converter("aten::silu(Tensor self) -> Tensor")
def silu(ctx, node, args):
    """x * sigmoid(x)."""
    x = args[0].itensor()
    sigmoid = ctx.net.add_activation(x, ctx.trt.ActivationType.SIGMOID).get_output(0)
    return ctx.set_output(node, [elementwise(ctx, x, sigmoid, ctx.trt.ElementWiseOperation.PROD)])


def _multiply(ctx, a, b):
    return elementwise(ctx, a, b, ctx.trt.ElementWiseOperation.PROD)


def _hard_sigmoid(ctx, x):
    """relu6(x + 3) / 6, PyTorch's hardsigmoid."""
    layer = ctx.net.add_activation(x, ctx.trt.ActivationType.HARD_SIGMOID)
    layer.alpha, layer.beta = 1 / 6, 0.5
    return layer.get_output(0)


@converter("aten::hardsigmoid(Tensor self) -> Tensor")
def hardsigmoid(ctx, node, args):
    """clamp(x / 6 + 1/2, 0, 1)."""
    return ctx.set_output(node, [_hard_sigmoid(ctx, args[0].itensor())])


@converter("aten::hardswish(Tensor self) -> Tensor")
def hardswish(ctx, node, args):
    """x * hardsigmoid(x)."""
    x = args[0].itensor()
    return ctx.set_output(node, [_multiply(ctx, x, _hard_sigmoid(ctx, x))])


def _softplus(ctx, x, beta, threshold):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (PyTorch's linear region)."""
    ops = ctx.trt.ElementWiseOperation
    layer = ctx.net.add_activation(x, ctx.trt.ActivationType.SOFTPLUS)
    layer.alpha, layer.beta = 1 / beta, beta
    linear = elementwise(ctx, _multiply(ctx, x, beta), threshold, ops.GREATER, dtype_of(ctx, x))
    return ctx.net.add_select(linear, x, layer.get_output(0)).get_output(0)


@converter("aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor")
def softplus(ctx, node, args):
    """Softplus with PyTorch's beta and linear threshold."""
    return ctx.set_output(node, [_softplus(ctx, args[0].itensor(), args["beta"].to_float(),
                                           args["threshold"].to_float())])


@converter("aten::mish(Tensor self) -> Tensor")
def mish(ctx, node, args):
    """x * tanh(softplus(x))."""
    x = args[0].itensor()
    tanh = ctx.net.add_activation(_softplus(ctx, x, 1.0, 20.0), ctx.trt.ActivationType.TANH).get_output(0)
    return ctx.set_output(node, [_multiply(ctx, x, tanh)])


@converter("aten::selu(Tensor self) -> Tensor")
def selu(ctx, node, args):
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with SELU's fixed alpha and scale."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _activation(ctx, node, args[0], ctx.trt.ActivationType.SELU, alpha, scale)


@converter("aten::celu(Tensor self, Scalar alpha=1.) -> Tensor")
def celu(ctx, node, args):
    """max(x, 0) + alpha * elu(min(x, 0) / alpha), which is celu for alpha > 0 only: only the negative part is
    divided, which for an alpha below 1 would overflow a large positive x."""
    alpha, x = args["alpha"].to_float(), args[0].itensor()
    if alpha <= 0:
        raise ValueError(f"celu with alpha {alpha}: only a positive alpha is converted")
    ops = ctx.trt.ElementWiseOperation
    negative = elementwise(ctx, x, 0.0, ops.MIN)
    layer = ctx.net.add_activation(_multiply(ctx, negative, 1 / alpha), ctx.trt.ActivationType.ELU)
    layer.alpha, layer.beta = 1.0, 0.0
    return ctx.set_output(node, [elementwise(ctx, elementwise(ctx, x, 0.0, ops.MAX),
                                             _multiply(ctx, layer.get_output(0), alpha), ops.SUM)])


@converter("aten::log_sigmoid(Tensor self) -> Tensor")
def log_sigmoid(ctx, node, args):
    """min(x, 0) - log1p(exp(-|x|)): log(sigmoid(x)) without its underflow to -inf, in float32 for half dtypes."""
    ops, unary = ctx.trt.ElementWiseOperation, ctx.trt.UnaryOperation
    dtype, x = in_float32(ctx, args[0].itensor())
    negative_magnitude = ctx.net.add_unary(ctx.net.add_unary(x, unary.ABS).get_output(0), unary.NEG).get_output(0)
    log = log1p(ctx, ctx.net.add_unary(negative_magnitude, unary.EXP).get_output(0))
    return ctx.set_output(node, [cast(ctx, elementwise(ctx, elementwise(ctx, x, 0, ops.MIN), log, ops.SUB), dtype)])


@converter("aten::prelu(Tensor self, Tensor weight) -> Tensor")
@converter("aten::_prelu_kernel(Tensor self, Tensor weight) -> Tensor")
def prelu(ctx, node, args):
    """x where x > 0, else weight * x; a per-channel weight applies along dim 1."""
    x, weight = args[0].itensor(), args[1].itensor()
    if rank(weight) != 1:
        raise ValueError(f"prelu weight must be 1-D (one slope, or one per channel), got rank {rank(weight)}")
    if rank(x) >= 2 and tuple(weight.shape) != (1,):
        weight = reshape_trt_dims(ctx, weight, (1, -1) + (1,) * (rank(x) - 2))  # channels are dim 1
    positive = elementwise(ctx, x, 0, ctx.trt.ElementWiseOperation.GREATER, dtype_of(ctx, x))
    slope = _multiply(ctx, x, cast(ctx, weight, dtype_of(ctx, x)))
    return ctx.set_output(node, ctx.net.add_select(positive, x, slope))


@converter("aten::glu(Tensor self, int dim=-1) -> Tensor")
def glu(ctx, node, args):
    """a * sigmoid(b), a and b the halves of self along dim (static there)."""
    x = args[0].itensor()
    dim = normalize_dim(args["dim"].to_int(), rank(x))
    shape = list(x.shape)
    if -1 in shape:
        raise NotImplementedError(f"glu of a tensor with dynamic shape {tuple(shape)}: the halves are static slices")
    if shape[dim] % 2:
        raise ValueError(f"glu halves dim {dim}, which has odd size {shape[dim]}")
    half = shape[:dim] + [shape[dim] // 2] + shape[dim + 1:]
    first = ctx.net.add_slice(x, [0] * len(shape), half, [1] * len(shape)).get_output(0)
    second_start = [0] * len(shape)
    second_start[dim] = shape[dim] // 2
    second = ctx.net.add_slice(x, second_start, half, [1] * len(shape)).get_output(0)
    gate = ctx.net.add_activation(second, ctx.trt.ActivationType.SIGMOID).get_output(0)
    return ctx.set_output(node, [_multiply(ctx, first, gate)])
