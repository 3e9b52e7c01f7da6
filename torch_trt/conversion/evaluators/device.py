"""The prim::device evaluator: inside an engine every runtime tensor lives on the engine's device.

Scripted code writes `torch.ones(n, device=x.device)`; `x.device` of a runtime tensor is then
ENGINE_DEVICE, which creation converters accept (their outputs are engine tensors) and `aten::to`
treats as no device change.
"""

import torch

from ..registry import evaluator


class _EngineDevice:
    """The device of the engine being built, whatever it will be; known only when the engine runs."""

    def __repr__(self):
        return "<the engine's device>"


ENGINE_DEVICE = _EngineDevice()


@evaluator("prim::device")
def device(ctx, node, args):
    """ENGINE_DEVICE for a runtime tensor; the device of a compile-time tensor constant."""
    value = args[0].value
    return value.device if isinstance(value, torch.Tensor) else ENGINE_DEVICE
