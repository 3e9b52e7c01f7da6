"""Pooling converters: max/avg_pool{1,2,3}d and adaptive_avg_pool{1,2,3}d as one pooling (or reduce) layer.

The digit in the op's name is its number of spatial dims; 1-D and unbatched inputs go through
`spatial_view`. ceil_mode maps onto EXPLICIT_ROUND_UP, except that PyTorch drops a last window
that would start in the right padding where TensorRT keeps it: there the post-padding shrinks.
"""

import torch

from ..conversion.registry import converter
from ._helpers import axes_mask, expand, spatial_view, unview


def _windows(size, kernel, stride, padding):
    """PyTorch's ceil_mode window count: a last window starting in the right padding is dropped."""
    count = (size + 2 * padding - kernel + stride - 1) // stride + 1
    return count - 1 if (count - 1) * stride >= size + padding else count


def _padding(trt, sizes, kernel, stride, padding, ceil_mode):
    """(padding_mode, post_padding) under which TensorRT's windows are PyTorch's."""
    modes, dims = trt.PaddingMode, list(zip(sizes, kernel, stride, padding))
    if not ceil_mode:
        return modes.EXPLICIT_ROUND_DOWN, padding
    if any(i < 0 and p + s > k for i, k, s, p in dims):
        raise ValueError("ceil_mode pooling over a dynamic spatial dim needs padding + stride <= kernel (else the "
                         "windows PyTorch keeps depend on the size)")
    # ROUND_UP keeps the windows PyTorch keeps unless it drops one; then post-padding ends at the last kept window.
    post = [p if i < 0 else min(p, (_windows(i, k, s, p) - 1) * s + k - i - p) for i, k, s, p in dims]
    if min(post) >= 0:
        return modes.EXPLICIT_ROUND_UP, post
    if all((i + 2 * p - k) // s + 1 == _windows(i, k, s, p) for i, k, s, p in dims):
        return modes.EXPLICIT_ROUND_DOWN, padding  # the dropped window was the only rounding up
    raise ValueError(f"ceil_mode pooling of {tuple(sizes)} with kernel {kernel}, stride {stride} and padding "
                     f"{padding} both drops and adds windows; TensorRT has one padding mode for all dims")


def _undilated(node, settings):
    """TensorRT's pooling has no dilation: other max pools run in PyTorch."""
    dilation = node.namedInput("dilation").toIValue()
    return dilation is not None and all(d == 1 for d in dilation)


def _no_divisor_override(node, settings):
    """TensorRT divides by the window's size: avg pools with divisor_override run in PyTorch."""
    return isinstance(node.namedInput("divisor_override").type(), torch.NoneType)


def _pool(ctx, node, args, kind, **attributes):
    """A pooling layer for {max,avg}_pool{1,2,3}d: stride [] means the kernel size."""
    x, n = args["self"].itensor(), int(node.kind()[-2])
    rank = len(x.shape)
    kernel = expand(args["kernel_size"].to_int_list(), n)
    stride = expand(args["stride"].to_int_list() or kernel, n)
    padding = expand(args["padding"].to_int_list(), n)
    mode, post = _padding(ctx.trt, x.shape[rank - n:], kernel, stride, padding, args["ceil_mode"].to_bool())
    if n == 1:  # pool [N, C, L, 1]
        kernel, stride, padding, post = kernel + [1], stride + [1], padding + [0], post + [0]
    layer = ctx.net.add_pooling_nd(spatial_view(ctx, x, n), kind, kernel)
    layer.stride_nd, layer.pre_padding, layer.post_padding, layer.padding_mode = stride, padding, post, mode
    for name, value in attributes.items():
        setattr(layer, name, value)
    return ctx.set_output(node, [unview(ctx, layer.get_output(0), rank, n)])


@converter("aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
           "int[1] dilation=[1], bool ceil_mode=False) -> Tensor", supports=_undilated)
@converter("aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
           "bool ceil_mode=False) -> Tensor", supports=_undilated)
@converter("aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
           "bool ceil_mode=False) -> Tensor", supports=_undilated)
def max_pool(ctx, node, args):
    """Max pooling (dilation 1, see _undilated)."""
    return _pool(ctx, node, args, ctx.trt.PoolingType.MAX)


@converter("aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
           "bool ceil_mode=False, bool count_include_pad=True) -> Tensor")
@converter("aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
           "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
           supports=_no_divisor_override)
@converter("aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
           "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
           supports=_no_divisor_override)
def avg_pool(ctx, node, args):
    """Average pooling; count_include_pad counts the explicit padding (never ceil_mode's overhang) in the divisor."""
    return _pool(ctx, node, args, ctx.trt.PoolingType.AVERAGE,
                 average_count_excludes_padding=not args["count_include_pad"].to_bool())


@converter("aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor")
@converter("aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
@converter("aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor")
def adaptive_avg_pool(ctx, node, args):
    """Adaptive average pooling to all 1s (a mean over the spatial dims) or to sizes that divide the input's."""
    x, n = args["self"].itensor(), int(node.kind()[-2])
    rank, out = len(x.shape), expand(args["output_size"].to_int_list(), n)
    sizes = list(x.shape[rank - n:])
    if all(o == 1 for o in out):
        mask = axes_mask(range(rank - n, rank), rank)
        return ctx.set_output(node, ctx.net.add_reduce(x, ctx.trt.ReduceOperation.AVG, mask, True))
    if any(i < 0 or o < 1 or i % o for i, o in zip(sizes, out)):
        raise ValueError(f"adaptive_avg_pool from {tuple(sizes)} to {tuple(out)} is not supported: only output sizes "
                         "that divide static input sizes give windows of one size")
    window = [i // o for i, o in zip(sizes, out)] + [1] * (n == 1)
    layer = ctx.net.add_pooling_nd(spatial_view(ctx, x, n), ctx.trt.PoolingType.AVERAGE, window)
    layer.stride_nd = window
    return ctx.set_output(node, [unview(ctx, layer.get_output(0), rank, n)])
