"""Normalization converters: batch_norm (inference) as a per-channel scale layer; layer_norm, group_norm and
instance_norm as one normalization layer.

Scale and bias follow the input's dtype (networks are strongly typed); batch_norm folds its statistics
into scale and shift in float64 before the cast, and scales a half input in float32 where the folded weights do not
fit its dtype or the shift would cancel x * scale past what its precision affords (PyTorch computes half batch norm
in float32). layer_norm, group_norm and instance_norm of half types
normalize in float32 between casts, as PyTorch computes their statistics.
"""

import torch

from ..conversion.registry import converter
from ._helpers import axes_mask, cast, constant_weights, dtype_of, elementwise, host_weights, reshape_trt_dims


def _affine(ctx, arg, fill, shape, dtype, rank):
    """A weight/bias argument (`fill` when None) as an ITensor of `dtype` shaped [1, ..., 1, *shape] (rank dims)."""
    full_shape = [1] * (rank - len(shape)) + list(shape)
    if arg.is_itensor():
        return reshape_trt_dims(ctx, cast(ctx, arg.itensor(), dtype), full_shape)
    value = torch.full(shape, fill) if arg.is_none() else arg.to_tensor()
    return ctx.constant(value.to(dtype).reshape(full_shape))


def _inference(node, settings):
    """Batch statistics (training, or no running stats) are not foldable: such batch_norms run in PyTorch."""
    return node.namedInput("training").toIValue() is False


_CANCELLATION_ERROR = 2 ** -7  # the most, relative to a channel's output scale, that rounding its shift may add


def _running_stats(ctx, node, args):
    """x * scale + shift per channel (dim 1), with scale and shift folded from the running statistics."""
    x = args["input"].itensor()
    dtype, rank = dtype_of(ctx, x), len(x.shape)
    mean, var = (constant_weights(args[name]).double() for name in ("running_mean", "running_var"))
    weight, bias = (args[name].optional(constant_weights) for name in ("weight", "bias"))
    scale = (var + args["eps"].to_float()).rsqrt() * (1.0 if weight is None else weight.double())
    bias = torch.zeros_like(mean) if bias is None else bias.double()
    shift = bias - mean * scale
    compute = dtype if _folds_in(dtype, mean, scale, bias, var.sqrt() * scale) else torch.float32
    view = x if rank >= 4 else reshape_trt_dims(ctx, x, (0,) * rank + (1,) * (4 - rank))  # scale takes rank >= 4
    layer = ctx.net.add_scale_nd(cast(ctx, view, compute), ctx.trt.ScaleMode.CHANNEL,
                                 host_weights(ctx, shift, compute), host_weights(ctx, scale, compute), None, 1)
    y = cast(ctx, layer.get_output(0), dtype)
    return ctx.set_output(node, [y if rank >= 4 else reshape_trt_dims(ctx, y, (0,) * rank)])


def _folds_in(dtype, mean, scale, bias, spread):
    """Whether x * scale + shift in `dtype` stays as close to PyTorch's (x - mean) * scale + bias as `dtype` allows:
    its weights fit, and the shift, which cancels mean * scale, rounds by little against the output's scale
    (`spread`, the channel's std times scale, plus its bias): a mean of 300 with a std of 0.1 loses the output in
    float16."""
    if dtype == torch.float32:
        return True
    shift, info = bias - mean * scale, torch.finfo(dtype)
    if max(scale.abs().max(), shift.abs().max()) > info.max:
        return False
    cancelled = (mean * scale).abs() * info.eps
    return bool((cancelled <= _CANCELLATION_ERROR * (spread.abs() + bias.abs())).all())


@converter("aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
           "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor", supports=_inference)
def batch_norm(ctx, node, args):
    """Inference batch norm (see _inference)."""
    return _running_stats(ctx, node, args)


@converter("aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
           "float eps=1e-05, bool cudnn_enable=True) -> Tensor")
def layer_norm(ctx, node, args):
    """LayerNorm over the trailing normalized_shape dims, in float32 for every float input."""
    x = args["input"].itensor()
    dtype, rank, shape = dtype_of(ctx, x), len(x.shape), args["normalized_shape"].to_int_list()
    scale = _affine(ctx, args["weight"], 1.0, shape, torch.float32, rank)
    bias = _affine(ctx, args["bias"], 0.0, shape, torch.float32, rank)
    layer = ctx.net.add_normalization(cast(ctx, x, torch.float32), scale, bias,
                                      axes_mask(range(rank - len(shape), rank), rank))
    layer.epsilon = args["eps"].to_float()
    return ctx.set_output(node, [cast(ctx, layer.get_output(0), dtype)])


def _normalize(ctx, node, args, axes, groups=1):
    """Normalize [N, C, *] over `axes` (per group of channels with groups > 1), then apply the per-channel weight and
    bias; in float32 for every float input."""
    x = cast(ctx, args["input"].itensor(), torch.float32)
    rank = len(x.shape)
    channels = [x.shape[1]] + [1] * (rank - 2)
    scale = _affine(ctx, args["weight"], 1.0, channels, torch.float32, rank)
    bias = _affine(ctx, args["bias"], 0.0, channels, torch.float32, rank)
    if groups == 1:
        layer = ctx.net.add_normalization(x, scale, bias, axes_mask(axes, rank))
    else:  # the layer's GroupNorm scale and bias are per group (add_normalization_v2 is TensorRT 10.14+): apply after
        per_group = [1, groups] + [1] * (rank - 2)
        layer = ctx.net.add_normalization(x, ctx.constant(torch.ones(per_group)), ctx.constant(torch.zeros(per_group)),
                                          axes_mask(axes, rank))
        layer.num_groups = groups
    layer.epsilon = args["eps"].to_float()
    y = layer.get_output(0)
    if groups > 1:
        operations = ctx.trt.ElementWiseOperation
        y = elementwise(ctx, elementwise(ctx, y, scale, operations.PROD), bias, operations.SUM)
    return ctx.set_output(node, [cast(ctx, y, dtype_of(ctx, args["input"].itensor()))])


@converter("aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
           "float eps=1e-05, bool cudnn_enabled=True) -> Tensor")
def group_norm(ctx, node, args):
    """GroupNorm of [N, C, *] (rank >= 3)."""
    groups, rank = args["num_groups"].to_int(), len(args["input"].itensor().shape)
    # One group normalizes over C too: TensorRT's num_groups 1 is per channel.
    return _normalize(ctx, node, args, range(1 if groups == 1 else 2, rank), groups)


@converter("aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
           "Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor")
def instance_norm(ctx, node, args):
    """InstanceNorm of [N, C, *]: over the spatial dims per sample and channel, or by the running statistics."""
    if not args["use_input_stats"].to_bool():
        return _running_stats(ctx, node, args)
    return _normalize(ctx, node, args, range(2, len(args["input"].itensor().shape)))
