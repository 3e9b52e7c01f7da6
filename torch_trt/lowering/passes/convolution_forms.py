"""Reduce conv1d/2d/3d, conv_transpose and convolution to the one aten::_convolution form."""

from ..rewrite import rewrite_pass

_CONVOLUTION = """%false : bool = prim::Constant[value=0]()
        %true : bool = prim::Constant[value=1]()
        %y = aten::_convolution(%x, %w, %b, %s, %p, %d, {transposed}, %op, %g, %false, %false, %true, %true)
        return (%y)"""


def _conv(op):
    return ("""graph(%x, %w, %b, %s, %p, %d, %g):
        %y = aten::{op}(%x, %w, %b, %s, %p, %d, %g)
        return (%y)""".replace("{op}", op), """graph(%x, %w, %b, %s, %p, %d, %g):
        %transposed : bool = prim::Constant[value=0]()
        %zero : int = prim::Constant[value=0]()
        %op : int[] = prim::ListConstruct(%zero)
        """ + _CONVOLUTION.replace("{transposed}", "%transposed"))


def _conv_transpose(op):
    return ("""graph(%x, %w, %b, %s, %p, %op, %g, %d):
        %y = aten::{op}(%x, %w, %b, %s, %p, %op, %g, %d)
        return (%y)""".replace("{op}", op), """graph(%x, %w, %b, %s, %p, %op, %g, %d):
        %transposed : bool = prim::Constant[value=1]()
        """ + _CONVOLUTION.replace("{transposed}", "%transposed"))


normalize_convolution = rewrite_pass(
    "normalize_convolution", "Rewrite every convolution form as aten::_convolution.",
    _conv("conv1d"), _conv("conv2d"), _conv("conv3d"),
    _conv_transpose("conv_transpose1d"), _conv_transpose("conv_transpose2d"), _conv_transpose("conv_transpose3d"),
    ("""graph(%x, %w, %b, %s, %p, %d, %t, %op, %g):
        %y = aten::convolution(%x, %w, %b, %s, %p, %d, %t, %op, %g)
        return (%y)""", """graph(%x, %w, %b, %s, %p, %d, %t, %op, %g):
        %false : bool = prim::Constant[value=0]()
        %true : bool = prim::Constant[value=1]()
        %y = aten::_convolution(%x, %w, %b, %s, %p, %d, %t, %op, %g, %false, %false, %true, %true)
        return (%y)"""),
)
