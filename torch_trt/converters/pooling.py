"""Pooling converters: max/avg_pool{1,2,3}d and adaptive_{avg,max}_pool{1,2,3}d as one pooling (or reduce) layer,
or for adaptive windows of several sizes or of a dynamic dim, one reduction per window.

The digit in the op's name is its number of spatial dims; 1-D and unbatched inputs go through
`spatial_view`. ceil_mode maps onto EXPLICIT_ROUND_UP, except that PyTorch drops a last window
that would start in the right padding where TensorRT keeps it: there the post-padding shrinks.
"""

import torch

from ..conversion.registry import converter
from ..conversion.shape_tensors import arithmetic, dim_size
from ._helpers import axes_mask, expand, slice_axes, spatial_view, unview


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


def _bins(ctx, size, out):
    """PyTorch's adaptive pooling windows along one dim of `size` (an int or a runtime int): (start, length) of
    [floor(i * size / out), ceil((i + 1) * size / out)) for each of the `out` windows."""
    def floor_of(i):
        return arithmetic(ctx, "FLOOR_DIV", arithmetic(ctx, "PROD", size, i), out)

    def ceil_of(i):
        return arithmetic(ctx, "SUB", 0, arithmetic(ctx, "FLOOR_DIV", arithmetic(ctx, "PROD", size, -i), out))

    return [(floor_of(i), arithmetic(ctx, "SUB", ceil_of(i + 1), floor_of(i))) for i in range(out)]


def _binned(ctx, x, dim, out, operation):
    """`x` reduced by `operation` over each of the `out` adaptive windows of `dim`, concatenated along `dim`; windows
    of a dynamic dim are slices of runtime start and length."""
    pieces = []
    for start, length in _bins(ctx, dim_size(ctx, x, dim), out):
        window = slice_axes(ctx, x, [dim], [start], [length], [1]).get_output(0)
        pieces.append(ctx.net.add_reduce(window, operation, 1 << dim, True).get_output(0))
    if len(pieces) == 1:
        return pieces[0]
    layer = ctx.net.add_concatenation(pieces)
    layer.axis = dim
    return layer.get_output(0)


def _adaptive(ctx, node, args, kind, operation):
    """Adaptive pooling: one pooling layer when every output size divides its static input size (windows of one
    size), else per spatial dim one reduction per window (both pools are separable); all 1s is a reduction."""
    x, n = args["self"].itensor(), int(node.kind()[-2])
    rank, out = len(x.shape), expand(args["output_size"].to_int_list(), n)
    sizes, dims = list(x.shape[rank - n:]), range(rank - n, rank)
    if all(o == 1 for o in out):
        return ctx.net.add_reduce(x, operation, axes_mask(dims, rank), True).get_output(0)
    if any(o < 1 for o in out):
        raise ValueError(f"adaptive pooling to an empty output {tuple(out)}")
    if any(i < 0 or i % o for i, o in zip(sizes, out)):
        for dim, o in zip(dims, out):
            x = x if x.shape[dim] == o else _binned(ctx, x, dim, o, operation)
        return x
    window = [i // o for i, o in zip(sizes, out)] + [1] * (n == 1)
    layer = ctx.net.add_pooling_nd(spatial_view(ctx, x, n), kind, window)
    layer.stride_nd = window
    return unview(ctx, layer.get_output(0), rank, n)


@converter("aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor")
@converter("aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
@converter("aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor")
def adaptive_avg_pool(ctx, node, args):
    """Adaptive average pooling."""
    return ctx.set_output(node, [_adaptive(ctx, node, args, ctx.trt.PoolingType.AVERAGE, ctx.trt.ReduceOperation.AVG)])


def _indices_unused(node, settings):
    """TensorRT's pooling gives no argmax indices: adaptive max pools whose indices are used run in PyTorch."""
    return not node.outputsAt(1).uses()


@converter("aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)", supports=_indices_unused)
@converter("aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", supports=_indices_unused)
@converter("aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)", supports=_indices_unused)
def adaptive_max_pool(ctx, node, args):
    """Adaptive max pooling; the indices have no uses (see _indices_unused): they alias the values, as every output
    needs a tensor."""
    values = _adaptive(ctx, node, args, ctx.trt.PoolingType.MAX, ctx.trt.ReduceOperation.MAX)
    return ctx.set_output(node, [values, values])[0]
