"""IPoolingLayer: 2-D/3-D max, average and max-average-blend pooling with TensorRT's padding modes.

Max pooling pads with -inf; average pooling pads with zeros and divides by the overlap of the window
with the unpadded input (average_count_excludes_padding, the default) or with the padded input. The
EXPLICIT_ROUND_UP overhang past the post-padding is never counted.
"""

import torch
import torch.nn.functional as F

from ..enums import LayerType, PaddingMode, PoolingType, member
from ..network import ILayer, check, network_method
from ..types import Dims, to_dims
from .convolution import WindowedLayer, channels_last_on_cpu, padded_for_call, torch_pads, window_padding


def _max_pool(x, pre, post, overhang, window, stride):
    pool = F.max_pool2d if x.dim() == 4 else F.max_pool3d
    # PyTorch's max pooling pads with -inf itself, up to half a window
    x, padding = padded_for_call(x, pre, post, overhang, all(2 * p <= w for p, w in zip(pre, window)),
                                 value=float("-inf"))
    return pool(channels_last_on_cpu(x), window, stride, padding)


def _average_pool(x, pre, post, overhang, window, stride, excludes_padding):
    """Window sums over the zero-padded input divided by the count of positions that count."""
    pool = F.avg_pool2d if x.dim() == 4 else F.avg_pool3d
    after = [a + e for a, e in zip(post, overhang)]
    # Accumulate in float32: CPU has no half avg_pool3d, and large half sums would lose precision.
    sums = pool(F.pad(x.float(), torch_pads(pre, after)), window, stride, divisor_override=1)
    counted = torch.ones((1, 1, *x.shape[2:]), device=x.device)
    if excludes_padding:
        counted = F.pad(counted, torch_pads(pre, after))
    else:  # explicit padding counts toward the divisor, the ROUND_UP overhang does not
        counted = F.pad(F.pad(counted, torch_pads(pre, post), value=1.0), torch_pads([0] * len(pre), overhang))
    return (sums / pool(counted, window, stride, divisor_override=1)).to(x.dtype)


class IPoolingLayer(WindowedLayer, ILayer):
    _layer_type = LayerType.POOLING
    # padding_nd precedes pre/post_padding: a plan restores attributes in this order, and padding_nd sets both.
    _attributes = ("type", "padding_nd", "pre_padding", "post_padding", "padding_mode", "blend_factor",
                   "average_count_excludes_padding", "window_size_nd", "stride_nd")
    _dims_attributes = ("pre_padding", "post_padding", "window_size_nd", "stride_nd", "padding_nd")
    _window = "window_size_nd"
    _positive = ("window_size_nd", "stride_nd")

    # IPoolingLayer.type is the pooling kind, shadowing ILayer.type as in TensorRT.
    type = property(lambda self: self._pooling, lambda self, value: self.__setattr__("_pooling", value))

    def _check(self, inputs):
        self._check_window(inputs[0])
        check(0.0 <= self.blend_factor <= 1.0, f"blend_factor {self.blend_factor} must be in [0, 1]")

    def _compute(self, inputs, weights):
        x = inputs[0]
        window, stride = list(self.window_size_nd), list(self.stride_nd)
        pre, post, overhang = window_padding(self.padding_mode, x.shape[2:], window, stride,
                                             self.pre_padding, self.post_padding)
        if self._pooling == PoolingType.MAX:
            return _max_pool(x, pre, post, overhang, window, stride)
        average = _average_pool(x, pre, post, overhang, window, stride, self.average_count_excludes_padding)
        if self._pooling == PoolingType.AVERAGE:
            return average
        maximum = _max_pool(x, pre, post, overhang, window, stride)
        return (1 - self.blend_factor) * maximum + self.blend_factor * average


@network_method
def add_pooling_nd(self, input, type, window_size):
    window = to_dims(window_size, "add_pooling_nd")
    return self._add(IPoolingLayer, [input], _pooling=member(PoolingType, type, "add_pooling_nd"),
                     window_size_nd=window, stride_nd=Dims((1,) * len(window)), pre_padding=Dims((0,) * len(window)),
                     post_padding=Dims((0,) * len(window)), padding_mode=PaddingMode.EXPLICIT_ROUND_DOWN,
                     blend_factor=0.0, average_count_excludes_padding=True)
