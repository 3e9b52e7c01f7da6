"""Convolution converters: aten::_convolution (every conv form after lowering) as one (de)convolution layer.

TensorRT's windowed layers are 2-D or 3-D over [N, C, *spatial]: `spatial_view` gives 1-D input a unit
trailing dim and unbatched input a unit batch, `unview` takes them off again (pooling uses both too).
Weights must be compile-time constants and are cast to the input's dtype (networks are strongly typed).
"""

import torch.nn.functional as F

from ..conversion.registry import converter
from ._helpers import dtype_of


def constant_weights(arg):
    """A weight argument's compile-time tensor; the layers here bake their weights into the engine."""
    if arg.is_itensor():
        raise ValueError(f"'{arg.name}' is a runtime tensor, but TensorRT needs these weights at build time; make it "
                         "a parameter or buffer of the module (freezing turns those into constants)")
    return arg.to_tensor().detach()


def host_weights(ctx, tensor, dtype):
    """`tensor` as a contiguous numpy array of `dtype`, kept alive until the build ends."""
    array = tensor.detach().to(dtype).cpu().contiguous().numpy()
    ctx.weights.append(array)
    return array


def expand(values, n):
    """A per-spatial-dim list: PyTorch lets one value stand for all n dims."""
    return list(values) * n if len(values) == 1 else list(values)


def spatial_view(ctx, x, n):
    """`x` ([N, C, *S] or unbatched [C, *S], len(S) = n) as the rank-4/5 tensor 2-D/3-D layers take."""
    rank = len(x.shape)
    if rank not in (n + 1, n + 2):
        raise ValueError(f"a {n}-D window op needs a rank-{n + 2} (or unbatched rank-{n + 1}) input, got rank {rank}")
    added = (n == 1) + (rank == n + 1)
    if not added:
        return x
    layer = ctx.net.add_shuffle(x)
    layer.reshape_dims = (0,) * rank + (1,) * added
    if rank == n + 1:
        layer.second_transpose = (rank + added - 1, *range(rank + added - 1))  # a new unit dim becomes the batch
    return layer.get_output(0)


def unview(ctx, y, rank, n):
    """Undo `spatial_view` on a layer's output: back to `rank` dims."""
    if len(y.shape) == rank:
        return y
    layer = ctx.net.add_shuffle(y)
    if rank == n + 1:
        layer.first_transpose = (*range(1, len(y.shape)), 0)  # the unit batch goes last, beside the unit 1-D dim
    layer.reshape_dims = (0,) * rank
    return layer.get_output(0)


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
    dtype, rank = dtype_of(ctx, x), len(x.shape)
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
    layer = add(spatial_view(ctx, x, n), maps, tuple(kernel.shape[2:]), host_weights(ctx, kernel, dtype),
                None if bias is None else host_weights(ctx, bias, dtype))
    layer.num_groups, layer.stride_nd, layer.dilation_nd = groups, stride, dilation
    layer.pre_padding, layer.post_padding = padding, post
    return ctx.set_output(node, [unview(ctx, layer.get_output(0), rank, n)])
