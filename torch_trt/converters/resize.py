"""Resize converters: aten::upsample_* (nearest, nearest-exact, linear, bilinear, bicubic, trilinear) as one resize
layer over the spatial dims of [N, C, *spatial].

PyTorch samples output index i of a dim at a coordinate scaled by 1/scale_factor when a scale factor is given, by
in/out otherwise; TensorRT always scales by in/out. The two agree where in * scale_factor is a whole number, so
other scale factors are refused (except with align_corners, which ignores them). A fully static input gets the
output shape; with dynamic dims the layer gets per-dim scales, exact in float32, so that TensorRT's
floor(in * scale) is PyTorch's output size, or, for an output size (fixed, or read from sizes at run time: FPN's
upsampling to the next level's size), that size as a shape tensor.
"""

import math

import numpy as np

from ..conversion import shape_tensors
from ..conversion.args import Arg
from ..conversion.registry import converter_table
from ._helpers import expand

_UPSAMPLE = {  # schema: interpolation
    "aten::upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor": "NEAREST",
    "aten::upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor": "NEAREST",
    "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) "
    "-> Tensor": "NEAREST",
    "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor": "NEAREST",
    "aten::upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, "
    "float? scales_w=None) -> Tensor": "NEAREST",
    "aten::upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor": "NEAREST",
    "aten::_upsample_nearest_exact2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
    "float? scales_w=None) -> Tensor": "NEAREST_EXACT",
    "aten::_upsample_nearest_exact2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "
    "-> Tensor": "NEAREST_EXACT",
    "aten::upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) "
    "-> Tensor": "LINEAR",
    "aten::upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) "
    "-> Tensor": "LINEAR",
    "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
    "float? scales_w=None) -> Tensor": "LINEAR",
    "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor": "LINEAR",
    "aten::upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, "
    "float? scales_h=None, float? scales_w=None) -> Tensor": "LINEAR",
    "aten::upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor": "LINEAR",
    "aten::upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
    "float? scales_w=None) -> Tensor": "CUBIC",
    "aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor": "CUBIC",
}


def _scale_factors(args, n):
    """Per spatial dim, PyTorch's scale factor or None: the .vec list, or the scales_* arguments."""
    if "scale_factors" in args:
        factors = args["scale_factors"].optional(Arg.to_float_list)
        return [None] * n if factors is None else expand(factors, n)
    return [arg.optional(Arg.to_float) for arg in args if arg.name.startswith("scales")]


def _output_size(size, out, factor, align_corners):
    """PyTorch's output size along one static dim, refusing a scale factor TensorRT would sample differently."""
    out = math.floor(size * factor) if out is None else out
    if factor and not align_corners and size * factor != out:
        raise ValueError(f"upsampling a dim of size {size} by {factor} samples at 1/{factor}, TensorRT at "
                         f"{size}/{out}: only scale factors giving whole output sizes are supported (or pass size=)")
    return out


def _trt_scale(size, out, factor):
    """TensorRT's scale for one dim of an input with dynamic dims: exact in float32, so floor(in * scale) is `out`."""
    if size < 0:
        if out is not None or factor is None or factor != int(factor):
            raise ValueError("upsampling a dynamic spatial dim by a scale factor needs a whole-number one")
        return factor
    scale = out / size
    if size * float(np.float32(scale)) != out:
        raise ValueError(f"resizing a static dim of size {size} to {out} on an input with dynamic dims needs the scale "
                         f"{out}/{size}, which float32 cannot hold exactly")
    return scale


def _configure(ctx, layer, interpolation, align_corners):
    """PyTorch's sampling for `interpolation`: coordinates, rounding, single-pixel selector, cubic coefficient."""
    trt = ctx.trt
    coordinates, selector = trt.ResizeCoordinateTransformation, trt.ResizeSelector
    if interpolation == "NEAREST":
        layer.coordinate_transformation, layer.nearest_rounding = coordinates.ASYMMETRIC, trt.ResizeRoundMode.FLOOR
    elif interpolation == "NEAREST_EXACT":  # floor((i + 0.5) * scale): half-pixel coordinates rounded half up
        layer.coordinate_transformation, layer.nearest_rounding = coordinates.HALF_PIXEL, trt.ResizeRoundMode.HALF_UP
    else:  # align_corners samples a single output pixel at 0, as the UPPER selector does
        layer.coordinate_transformation = coordinates.ALIGN_CORNERS if align_corners else coordinates.HALF_PIXEL
        layer.selector_for_single_pixel = selector.UPPER if align_corners else selector.FORMULA
        layer.cubic_coeff = -0.75  # PyTorch's bicubic coefficient
    layer.resize_mode = getattr(trt.InterpolationMode, interpolation.replace("_EXACT", ""))


def upsample(ctx, node, args, interpolation):
    """Resize of the spatial dims per PyTorch's output_size or scale factors."""
    x = args[0].itensor()
    shape, n = list(x.shape), len(x.shape) - 2
    align_corners = args.get("align_corners", False).to_bool()
    sizes = args["output_size"].optional(lambda arg: expand(shape_tensors.int_list(ctx, arg), n)) or [None] * n
    factors = _scale_factors(args, n)
    layer = ctx.net.add_resize(x)
    read_at_run_time = any(shape_tensors.is_runtime(ctx, out) for out in sizes)
    if None not in sizes and all(factor is None for factor in factors) and (read_at_run_time or min(shape) < 0):
        # An output size read from sizes, or a fixed one for dynamic dims: TensorRT, as PyTorch, scales by in/out
        layer.set_input(1, shape_tensors.shape_vector(ctx, shape_tensors.shape_of(ctx, x)[:2] + sizes))
    elif read_at_run_time:
        raise ValueError("an output size read at run time beside scale factors: PyTorch samples by the factors, "
                         "which a resize to a runtime size cannot")
    elif all(d >= 0 for d in shape):
        layer.shape = shape[:2] + [_output_size(*dim, align_corners) for dim in zip(shape[2:], sizes, factors)]
    else:
        sizes = [out if size < 0 else _output_size(size, out, factor, align_corners)
                 for size, out, factor in zip(shape[2:], sizes, factors)]
        layer.scales = [1.0, 1.0] + [_trt_scale(*dim) for dim in zip(shape[2:], sizes, factors)]
    _configure(ctx, layer, interpolation, align_corners)
    return ctx.set_output(node, layer)


converter_table(_UPSAMPLE, upsample, "Upsampling, {} interpolation.")
