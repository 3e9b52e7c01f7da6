"""IConvolutionLayer and IDeconvolutionLayer: 2-D/3-D (de)convolution with TensorRT's padding modes.

TensorRT's kernel layouts (GKCRS for convolution, CKRS for deconvolution) are PyTorch's conv and
conv_transpose weight layouts, so computing is a reshape and a torch.nn.functional call. The
padding-mode arithmetic here (window_padding, WindowedLayer) is shared with pooling.
"""

import math

import torch
import torch.nn.functional as F

from ...dtypes import FLOAT_DTYPES
from ..enums import LayerType, PaddingMode
from ..network import ILayer, check, check_deferred, network_method
from ..types import TORCH_DTYPE, TRT_DTYPE, Dims, to_dims, to_weights

_SAME = (PaddingMode.SAME_UPPER, PaddingMode.SAME_LOWER)


def torch_pads(pre, post):
    """F.pad's argument for padding the trailing dims: (before, after) pairs from the last dim backwards."""
    return [v for b, a in zip(reversed(list(pre)), reversed(list(post))) for v in (b, a)]


def padded_for_call(x, pre, post, overhang, call_pads, value=0.0):
    """(input, padding argument) for a PyTorch convolution or pooling call: padding the same before and after, with
    no overhang, is left to the call where it takes it (`call_pads`); any other is added to the input here."""
    if list(pre) == list(post) and not any(overhang) and (call_pads or not any(pre)):
        return x, list(pre)
    return F.pad(x, torch_pads(pre, [a + e for a, e in zip(post, overhang)]), value=value), [0] * len(pre)


def channels_last_on_cpu(x):
    """A 2-D image batch on the CPU laid out channels-last, where oneDNN's convolutions run at least as fast and max
    pooling an order of magnitude faster (0.67 -> 0.05 ms for 8x32x32x32 on two cores); a convolution's output keeps
    its input's layout, so a network lays out its input once."""
    return x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 and x.device.type == "cpu" else x


def same_split(totals, mode):
    """Split SAME padding totals into (pre, post): the odd element goes after (SAME_UPPER) or before (SAME_LOWER)."""
    low = [p // 2 for p in totals]
    high = [p - q for p, q in zip(totals, low)]
    return (low, high) if mode == PaddingMode.SAME_UPPER else (high, low)


def window_padding(mode, sizes, windows, strides, pre, post):
    """TensorRT's (pre, post, overhang) per spatial dim; the overhang lets EXPLICIT_ROUND_UP's last window run past
    the post-padding, and is never counted as padding."""
    if mode in _SAME:
        # P = floor((I-1)/S)*S + DK - I, clamped at 0: a window smaller than the stride never crops the input.
        totals = [max(0, (i - 1) // s * s + k - i) for i, k, s in zip(sizes, windows, strides)]
        pre, post = same_split(totals, mode)
        return pre, post, [0] * len(totals)
    spans = [i + b + a - k for i, b, a, k in zip(sizes, pre, post, windows)]
    check_deferred(all(span >= 0 for span in spans), f"window {tuple(windows)} is larger than the padded input "
          f"{tuple(i + b + a for i, b, a in zip(sizes, pre, post))}")
    round_up = mode == PaddingMode.EXPLICIT_ROUND_UP
    return list(pre), list(post), [-span % s if round_up else 0 for span, s in zip(spans, strides)]


class WindowedLayer:
    """Mixin for convolution, deconvolution and pooling: Dims/Weights attributes, padding_nd, the N-D rules."""

    _window = None            # the attribute whose length fixes the number of spatial dims
    _positive = ()            # Dims attributes whose entries must be >= 1
    _dims_attributes = ()

    def __setattr__(self, key, value):
        # pybind11 converts sequences to Dims and numpy arrays to Weights on assignment; mirror that.
        if key in self._dims_attributes:
            value = to_dims(value, f"{type(self).__name__}.{key}")
        elif key in self._weight_attributes:
            value = to_weights(value, f"{type(self).__name__}.{key}")
        super().__setattr__(key, value)

    def _set_padding_nd(self, value):
        self.pre_padding = value
        self.post_padding = value

    # Setting padding_nd sets symmetric padding; reading it returns the pre-padding, as in TensorRT.
    padding_nd = property(lambda self: self.pre_padding, _set_padding_nd)

    def _check_window(self, x):
        """The rules shared by all windowed layers: 2-D/3-D, matching rank, float input, sane Dims."""
        kind, n = type(self).__name__, len(getattr(self, self._window))
        check(n in (2, 3), f"{kind} is 2-D or 3-D only, but {self._window} has {n} entries")
        check(x.dim() == n + 2, f"a {n}-D {kind} needs a rank-{n + 2} input, got rank {x.dim()}")
        check(x.dtype in FLOAT_DTYPES, f"{kind} needs a FLOAT, HALF or BF16 input, got {TRT_DTYPE[x.dtype].name}; "
              "add_cast it first")
        for name in self._dims_attributes:
            check(len(getattr(self, name)) == n, f"{name} {tuple(getattr(self, name))} must have {n} entries")
        for name in self._positive:
            check(all(v >= 1 for v in getattr(self, name)), f"{name} {tuple(getattr(self, name))} must be >= 1")
        for name in ("pre_padding", "post_padding"):
            check(all(v >= 0 for v in getattr(self, name)), f"{name} {tuple(getattr(self, name))} must be >= 0")


class _Convolution(WindowedLayer):
    """What convolution and deconvolution share: attributes, weight rules, dilated windows."""

    # padding_nd precedes pre/post_padding: a plan restores attributes in this order, and padding_nd sets both.
    _attributes = ("num_output_maps", "padding_nd", "pre_padding", "post_padding", "padding_mode", "num_groups",
                   "kernel", "bias", "kernel_size_nd", "stride_nd", "dilation_nd")
    _weight_attributes = ("kernel", "bias")
    _dims_attributes = ("pre_padding", "post_padding", "kernel_size_nd", "stride_nd", "padding_nd", "dilation_nd")
    _window = "kernel_size_nd"
    _positive = ("kernel_size_nd", "stride_nd", "dilation_nd")

    def _check(self, inputs):
        x = inputs[0]
        self._check_window(x)
        channels, maps, groups = x.shape[1], self.num_output_maps, self.num_groups
        check(maps >= 1 and groups >= 1, f"num_output_maps {maps} and num_groups {groups} must be >= 1")
        check(channels % groups == 0, f"input channels {channels} are not divisible by num_groups {groups}")
        check(maps % groups == 0, f"num_output_maps {maps} is not divisible by num_groups {groups}")
        check(self.kernel is not None and self.kernel.size > 0,
              "kernel weights are empty; kernels given as tensors through set_input(1) are not supported")
        check(len(inputs) == 1, "kernel and bias tensors given through set_input(1) and set_input(2) are not "
              "supported by the reference; give them as the layer's kernel and bias Weights")
        shape = self._kernel_shape(channels, groups)
        # Converters set num_groups after add_*: a grouped kernel waits for it, and the build refuses if it never fits.
        check_deferred(self.kernel.size == math.prod(shape), f"kernel holds {self.kernel.size} weights, but "
                       f"{self._layout} shape {shape} for num_groups {groups} needs {math.prod(shape)}; set num_groups "
                       "(the input channel dim must be static)")
        bias_size = 0 if self.bias is None else self.bias.size
        check(bias_size in (0, maps), f"bias holds {bias_size} weights, expected num_output_maps = {maps}")
        # Networks are strongly typed: weights are not converted to the input's type; add_cast the input instead.
        for name, weights in (("kernel", self.kernel), ("bias", self.bias)):
            if weights is not None and weights.size:
                check(TORCH_DTYPE[weights.dtype] == x.dtype, f"{name} weights are {weights.dtype.name} but the input "
                      f"is {TRT_DTYPE[x.dtype].name}; weights must match the input type (add_cast the input)")

    def _kernel(self, x, weights):
        """(kernel in its layout, groups); _check has made sure the weight count fits num_groups."""
        return weights["kernel"].reshape(self._kernel_shape(x.shape[1], self.num_groups)), self.num_groups

    def _dilated(self):
        """DK = 1 + dilation * (kernel - 1) per spatial dim."""
        return [1 + d * (k - 1) for d, k in zip(self.dilation_nd, self.kernel_size_nd)]


class IConvolutionLayer(_Convolution, ILayer):
    _layer_type = LayerType.CONVOLUTION
    _layout = "GKCRS"

    def _kernel_shape(self, channels, groups):
        return (self.num_output_maps, channels // groups, *self.kernel_size_nd)

    def _compute(self, inputs, weights):
        x = inputs[0]
        stride = list(self.stride_nd)
        kernel, groups = self._kernel(x, weights)
        patches = self._runs_as_patch_product(x.dim(), groups)
        x, padding = padded_for_call(x, *window_padding(self.padding_mode, x.shape[2:], self._dilated(), stride,
                                                        self.pre_padding, self.post_padding), call_pads=not patches)
        if patches:
            return _patch_product(x, kernel, weights.get("bias"))
        conv = F.conv2d if x.dim() == 4 else F.conv3d
        return conv(channels_last_on_cpu(x), kernel, weights.get("bias"), stride, padding, list(self.dilation_nd),
                    groups)

    def _runs_as_patch_product(self, rank, groups):
        """Whether this convolution runs as a GEMM over its patches (_patch_product): 2-D, ungrouped, undilated,
        with windows that tile the input (stride = kernel size, not 1)."""
        return rank == 4 and groups == 1 and list(self.stride_nd) == list(self.kernel_size_nd) != [1, 1] and \
            set(self.dilation_nd) == {1}


def _patch_product(x, kernel, bias):
    """A 2-D convolution whose windows tile the input (stride = kernel size; a patch embedding) as one GEMM over the
    patches: cuDNN's kernel for ViT-B/16's patch embedding takes 80 us at batch 1 on an H100, the GEMM a few."""
    n, channels, height, width = x.shape
    maps, _, kh, kw = kernel.shape
    rows, cols = height // kh, width // kw  # a remainder too short for a window is not read
    patches = x[:, :, :rows * kh, :cols * kw].reshape(n, channels, rows, kh, cols, kw).permute(0, 2, 4, 1, 3, 5)
    product = F.linear(patches.reshape(n * rows * cols, channels * kh * kw), kernel.reshape(maps, -1), bias)
    return product.reshape(n, rows, cols, maps).permute(0, 3, 1, 2)


class IDeconvolutionLayer(_Convolution, ILayer):
    _layer_type = LayerType.DECONVOLUTION
    _layout = "CKRS"

    def _kernel_shape(self, channels, groups):
        return (channels, self.num_output_maps // groups, *self.kernel_size_nd)

    def _compute(self, inputs, weights):
        x = inputs[0]
        stride = list(self.stride_nd)
        deconv = F.conv_transpose2d if x.dim() == 4 else F.conv_transpose3d
        kernel, groups = self._kernel(x, weights)
        # The full transposed convolution is (I-1)*S + DK long; padding crops it.
        out = deconv(x, kernel, weights.get("bias"), stride, 0, 0, groups, list(self.dilation_nd))
        if self.padding_mode in _SAME:
            pre, post = same_split([max(k - s, 0) for k, s in zip(self._dilated(), stride)], self.padding_mode)
        else:
            pre, post = self.pre_padding, self.post_padding
        for axis, (b, a) in enumerate(zip(pre, post), start=2):
            check(out.shape[axis] > b + a, f"padding {b}+{a} crops away the whole deconvolution output "
                  f"({out.shape[axis]} long) in spatial dim {axis - 2}")
            out = out.narrow(axis, b, out.shape[axis] - b - a)
        return out


def _add(network, cls, input, num_output_maps, kernel_shape, kernel, bias, what):
    kernel_size = to_dims(kernel_shape, what)
    ones, zeros = Dims((1,) * len(kernel_size)), Dims((0,) * len(kernel_size))
    return network._add(cls, [input], num_output_maps=int(num_output_maps), kernel_size_nd=kernel_size,
                        kernel=to_weights(kernel, what), bias=to_weights(bias, what), num_groups=1,
                        padding_mode=PaddingMode.EXPLICIT_ROUND_DOWN, stride_nd=ones, dilation_nd=ones,
                        pre_padding=zeros, post_padding=zeros)


@network_method
def add_convolution_nd(self, input, num_output_maps, kernel_shape, kernel, bias=None):
    return _add(self, IConvolutionLayer, input, num_output_maps, kernel_shape, kernel, bias, "add_convolution_nd")


@network_method
def add_deconvolution_nd(self, input, num_output_maps, kernel_shape, kernel, bias=None):
    return _add(self, IDeconvolutionLayer, input, num_output_maps, kernel_shape, kernel, bias, "add_deconvolution_nd")
