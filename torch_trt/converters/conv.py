"""Convolution converters: aten::_convolution (every conv form after lowering) as one (de)convolution layer, and
aten::im2col (nn.Unfold, a convolution's sliding blocks) as strided slices.

TensorRT's windowed layers are 2-D or 3-D over [N, C, *spatial]: `_helpers.spatial_view` gives 1-D input a
unit trailing dim and unbatched input a unit batch, `unview` takes them off again. Weights must be compile-time constants and are cast to the input's dtype (networks are strongly typed).
"""

import torch
import torch.nn.functional as F

from ..conversion.registry import converter
from ..conversion.shape_tensors import arithmetic, dim_size
from ._helpers import (cast, compute_dtype, constant_weights, dtype_of, expand, host_weights, reduced_weights,
                       reshape_torch_sizes, slice_axes, spatial_view, unview)


def _output_padding(kernel, padding, dilation, output_padding):
    """(kernel, post_padding) for a transposed convolution's output_padding, which TensorRT lacks: crop less at the
    far end; past the full output (where only the bias lands) grow the kernel by zero taps instead."""
    taps = [max(0, -(-(extra - p) // d)) for p, d, extra in zip(padding, dilation, output_padding)]
    post = [p - extra + t * d for p, d, extra, t in zip(padding, dilation, output_padding, taps)]
    return F.pad(kernel, [v for t in reversed(taps) for v in (0, t)]), post


@converter("aten::_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
           "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, "
           "bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor")
def convolution(ctx, node, args):
    """1-D to 3-D convolution or transposed convolution with constant weights."""
    x = args["input"].itensor()
    rank, dtype = len(x.shape), compute_dtype(ctx, dtype_of(ctx, x))  # kernel weights take the input's dtype
    kernel, bias = constant_weights(args["weight"]), args["bias"].optional(constant_weights)
    n, transposed, groups = kernel.dim() - 2, args["transposed"].to_bool(), args["groups"].to_int()
    stride, padding, dilation, output_padding = (expand(args[name].to_int_list(), n) for name in
                                                 ("stride", "padding", "dilation", "output_padding"))
    kernel, post = _output_padding(kernel, padding, dilation, output_padding) if transposed else (kernel, padding)
    if n == 1:  # convolve [N, C, L, 1]
        kernel, stride, dilation = kernel[..., None], stride + [1], dilation + [1]
        padding, post = padding + [0], post + [0]
    add = ctx.net.add_deconvolution_nd if transposed else ctx.net.add_convolution_nd
    maps = kernel.shape[1] * groups if transposed else kernel.shape[0]
    weights = (None if w is None else host_weights(ctx, reduced_weights(ctx, w, dtype), dtype) for w in (kernel, bias))
    layer = add(spatial_view(ctx, cast(ctx, x, dtype), n), maps, tuple(kernel.shape[2:]), *weights)
    layer.num_groups, layer.stride_nd, layer.dilation_nd = groups, stride, dilation
    layer.pre_padding, layer.post_padding = padding, post
    return ctx.set_output(node, [cast(ctx, unview(ctx, layer.get_output(0), rank, n), dtype_of(ctx, x))])


def _blocks(ctx, size, kernel, dilation, padding, stride):
    """How many blocks fit along a dim of `size` (an int or a runtime int); at least one, as shape analysis ran eager
    at the profile's min shape, and more size never fits fewer."""
    reach = 2 * padding - dilation * (kernel - 1) - 1
    return arithmetic(ctx, "SUM", arithmetic(ctx, "FLOOR_DIV", arithmetic(ctx, "SUM", size, reach), stride), 1)


@converter("aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor")
def im2col(ctx, node, args):
    """nn.Unfold: one strided slice per kernel tap (padding read as zeros), exact where a one-hot convolution's NaNs
    and infinities would reach the other taps."""
    x = args["self"].itensor()
    rank = len(x.shape)
    kernel, dilation, padding, stride = (args[name].to_int_list() for name in
                                         ("kernel_size", "dilation", "padding", "stride"))
    axes = [rank - 2, rank - 1]
    blocks = [_blocks(ctx, dim_size(ctx, x, axis), *values) for axis, *values in
              zip(axes, kernel, dilation, padding, stride)]
    mode = ctx.trt.SampleMode.FILL if any(padding) else None
    taps = [slice_axes(ctx, x, axes, [i * dilation[0] - padding[0], j * dilation[1] - padding[1]], blocks, stride,
                       mode).get_output(0) for i in range(kernel[0]) for j in range(kernel[1])]
    layer = ctx.net.add_concatenation(taps)
    layer.axis = rank - 2  # [..., C, kh * kw * H', W'] holds PyTorch's [..., C * kh * kw, H' * W'] in row-major order
    channels = arithmetic(ctx, "PROD", dim_size(ctx, x, rank - 3), kernel[0] * kernel[1])
    sizes = list(x.shape[:rank - 3]) + [channels, arithmetic(ctx, "PROD", *blocks)]
    return ctx.set_output(node, [reshape_torch_sizes(ctx, layer.get_output(0), sizes, copied=rank - 3)])
