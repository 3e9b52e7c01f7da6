"""IPaddingLayer: zero-padding of the innermost 2 dims of a tensor of rank >= 4; negative padding crops."""

import torch
import torch.nn.functional as F

from ..enums import LayerType
from ..network import ILayer, check, network_method
from ..types import to_dims
from .convolution import torch_pads


_TYPES = (torch.float32, torch.float16, torch.int32, torch.int8)  # TensorRT's Padding operator


class IPaddingLayer(ILayer):
    _layer_type = LayerType.PADDING
    _attributes = ("pre_padding_nd", "post_padding_nd")

    def __setattr__(self, key, value):
        # pybind11 converts sequences to Dims on assignment; mirror that.
        if key in self._attributes:
            value = to_dims(value, f"IPaddingLayer.{key}")
        super().__setattr__(key, value)

    def _check(self, inputs):
        x, pre, post = inputs[0], tuple(self.pre_padding_nd), tuple(self.post_padding_nd)
        check(len(pre) == 2 and len(post) == 2,
              f"only 2-D padding is supported: pre_padding_nd {pre} and post_padding_nd {post} need 2 entries each")
        check(x.dim() >= 4, f"padding needs an input of rank >= 4 (it pads the innermost 2 dims), got rank {x.dim()}")
        check(x.dtype in _TYPES, f"padding needs a float32, float16, int32 or int8 input, got {x.dtype}")
        sizes = [d + b + a for d, b, a in zip(x.shape[-2:], pre, post)]
        check(all(s >= 0 for s in sizes), f"padding {pre}/{post} crops more than the input dims "
              f"{tuple(x.shape[-2:])} hold")

    def _compute(self, inputs, weights):
        return F.pad(inputs[0], torch_pads(self.pre_padding_nd, self.post_padding_nd))


@network_method
def add_padding_nd(self, input, pre_padding, post_padding):
    return self._add(IPaddingLayer, [input], pre_padding_nd=to_dims(pre_padding, "add_padding_nd"),
                     post_padding_nd=to_dims(post_padding, "add_padding_nd"))
