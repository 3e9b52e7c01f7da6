"""Padding converters: constant_pad_nd, pad (constant, reflect, replicate, circular), reflection_pad{1,2,3}d and
replication_pad{1,2,3}d as one slice layer reading past the input's edges.

A slice starting at -before and `before + size + after` long over each padded dim reads out of range exactly
where PyTorch pads; the SampleMode says what such reads give (FILL: the fill value, REFLECT, CLAMP: the edge,
WRAP: the other end). Negative padding crops. Where a padded dim is dynamic or an amount is a runtime int (padding
to a multiple of a window), the slice takes its start and size as shape tensors; zero padding of the last 2 dims of
a dynamic input by constant amounts is the padding layer's (of its types; an input of rank below 4 gets leading unit
dims for it). The amounts must fit the input as eager requires (reflect: below the dim's size, circular: at most
it), at build or, for runtime sizes, when the engine runs.
"""

import torch

from ..conversion.registry import converter
from ..conversion.shape_tensors import arithmetic, at_least_zero, dim_size, int_list, is_runtime, require
from ._helpers import drop_unit_dims, dtype_of, insert_unit_dims, slice_axes

_SAMPLE_MODES = {"constant": "FILL", "reflect": "REFLECT", "replicate": "CLAMP", "circular": "WRAP"}
_PADDING_LAYER_TYPES = (torch.float32, torch.float16, torch.int32, torch.int8)


def _pairs(ctx, pad, rank):
    """{dim: (before, after)} for the dims PyTorch's pad list (last dim first) changes (ints or runtime ints)."""
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise ValueError(f"pad {pad} must hold (before, after) pairs for at most the {rank} dims of the input")
    pairs = {rank - 1 - i: (pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)}
    return {dim: pair for dim, pair in pairs.items() if any(is_runtime(ctx, amount) for amount in pair)
            or pair != (0, 0)}


def _zero_padding(ctx, x, pairs):
    """Zero padding of (some of) the last 2 dims with the padding layer, whose input has rank >= 4."""
    rank = len(x.shape)
    before, after = zip(*(pairs.get(dim, (0, 0)) for dim in (rank - 2, rank - 1)))
    units = list(range(4 - rank))
    if units:
        x = insert_unit_dims(ctx, x, units)
    padded = ctx.net.add_padding_nd(x, before, after).get_output(0)
    return drop_unit_dims(ctx, padded, units) if units else padded


def _slice(ctx, x, pairs, sample_mode):
    """The slice from -before to size + after over each dim of `pairs` ({dim: (before, after)}), reading out of
    range by `sample_mode` (a SampleMode's name)."""
    dims = sorted(pairs)
    starts = [arithmetic(ctx, "SUB", 0, pairs[d][0]) for d in dims]
    sizes = [arithmetic(ctx, "SUM", dim_size(ctx, x, d), arithmetic(ctx, "SUM", *pairs[d])) for d in dims]
    return slice_axes(ctx, x, dims, starts, sizes, [1] * len(dims), getattr(ctx.trt.SampleMode, sample_mode))


def _require_fitting(ctx, x, pairs, mode):
    """The amounts eager accepts for `mode`: reflect's below the dim's size, circular's at most it, and a padded size
    that is not negative."""
    for dim, (before, after) in pairs.items():
        size = dim_size(ctx, x, dim)
        padded = arithmetic(ctx, "SUM", size, arithmetic(ctx, "SUM", before, after))
        require(ctx, at_least_zero(ctx, padded), f"{mode} padding of dim {dim}: the padded size must not be negative")
        if mode in ("reflect", "circular"):
            limit = arithmetic(ctx, "SUB", size, 1) if mode == "reflect" else size
            room = arithmetic(ctx, "SUB", limit, arithmetic(ctx, "MAX", before, after))
            require(ctx, at_least_zero(ctx, room), f"{mode} padding of dim {dim} must be "
                    f"{'smaller than' if mode == 'reflect' else 'at most'} its size")


def _pad(ctx, x, pad, mode, value=0.0):
    """`x` padded by PyTorch's `pad` list (ints or runtime ints) in `mode` (constant padding fills with `value`)."""
    rank = len(x.shape)
    if mode not in _SAMPLE_MODES:
        raise ValueError(f"padding mode {mode!r} is not one of {sorted(_SAMPLE_MODES)}")
    pairs = _pairs(ctx, pad, rank) or {rank - 1: (0, 0)}  # padding by nothing is a slice of everything
    amounts = [amount for pair in pairs.values() for amount in pair]
    static_amounts = not any(is_runtime(ctx, amount) for amount in amounts)
    if (any(x.shape[dim] < 0 for dim in pairs) and static_amounts and mode == "constant" and value == 0
            and rank >= 2 and min(pairs) >= rank - 2 and dtype_of(ctx, x) in _PADDING_LAYER_TYPES):
        return _zero_padding(ctx, x, pairs)
    _require_fitting(ctx, x, pairs, mode)
    if mode == "circular" and (not static_amounts or min(amounts) < 0):
        # PyTorch crops first and wraps what is left: the wrap reads the cropped tensor's ends, not the input's
        crops = {dim: tuple(arithmetic(ctx, "MIN", amount, 0) for amount in pair) for dim, pair in pairs.items()}
        x = _slice(ctx, x, crops, "STRICT_BOUNDS").get_output(0)
        pairs = {dim: tuple(arithmetic(ctx, "MAX", amount, 0) for amount in pair) for dim, pair in pairs.items()}
    layer = _slice(ctx, x, pairs, _SAMPLE_MODES[mode])
    if mode == "constant":
        layer.set_input(4, ctx.constant(torch.tensor(value).to(dtype_of(ctx, x))))
    return layer.get_output(0)


@converter("aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
def constant_pad_nd(ctx, node, args):
    """Constant padding (the F.pad default)."""
    x = args["self"].itensor()
    return ctx.set_output(node, [_pad(ctx, x, int_list(ctx, args["pad"]), "constant", args["value"].to_float())])


@converter('aten::pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor')
def pad(ctx, node, args):
    """F.pad in any of its modes; value None means 0."""
    value = args["value"].optional(lambda arg: arg.to_float()) or 0.0
    return ctx.set_output(node, [_pad(ctx, args["self"].itensor(), int_list(ctx, args["pad"]), args["mode"].to_str(),
                                      value)])


@converter("aten::reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor")
@converter("aten::reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor")
@converter("aten::reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor")
def reflection_pad(ctx, node, args):
    """Reflection padding of the last 1-3 dims."""
    return ctx.set_output(node, [_pad(ctx, args["self"].itensor(), int_list(ctx, args["padding"]), "reflect")])


@converter("aten::replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor")
@converter("aten::replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor")
@converter("aten::replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor")
def replication_pad(ctx, node, args):
    """Replication (edge) padding of the last 1-3 dims."""
    return ctx.set_output(node, [_pad(ctx, args["self"].itensor(), int_list(ctx, args["padding"]), "replicate")])
