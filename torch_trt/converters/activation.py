"""Activation converters: one IActivationLayer each, alpha/beta from the schema's arguments."""

from ..conversion.registry import converter, converter_table
from ._helpers import elementwise


def _activation(ctx, node, x, kind, alpha=0.0, beta=0.0):
    layer = ctx.net.add_activation(x.itensor(), kind)
    layer.alpha, layer.beta = alpha, beta
    return ctx.set_output(node, layer)


_SIMPLE = {
    "aten::relu(Tensor self) -> Tensor": "RELU",
    "aten::sigmoid(Tensor self) -> Tensor": "SIGMOID",
    "aten::tanh(Tensor self) -> Tensor": "TANH",
}


converter_table(_SIMPLE, lambda ctx, node, args, kind: _activation(
    ctx, node, args[0], getattr(ctx.trt.ActivationType, kind)), "Activation")


@converter('aten::gelu(Tensor self, *, str approximate="none") -> Tensor')
def gelu(ctx, node, args):
    """GELU, exact (erf) or tanh approximation."""
    kind = "GELU_TANH" if args["approximate"].to_str() == "tanh" else "GELU_ERF"
    return _activation(ctx, node, args[0], getattr(ctx.trt.ActivationType, kind))


@converter("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")
def hardtanh(ctx, node, args):
    """Clip to [min_val, max_val]."""
    return _activation(ctx, node, args[0], ctx.trt.ActivationType.CLIP, args[1].to_float(), args[2].to_float())


@converter("aten::relu6(Tensor self) -> Tensor")
def relu6(ctx, node, args):
    """Clip to [0, 6]."""
    return _activation(ctx, node, args[0], ctx.trt.ActivationType.CLIP, 0.0, 6.0)


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
