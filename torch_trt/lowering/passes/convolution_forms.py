"""Reduce conv1d/2d/3d, conv_transpose and convolution to the one aten::_convolution form."""

from ..rewrite import rewrite_pass

_CONVOLUTION = """%false : bool = prim::Constant[value=0]()
        %true : bool = prim::Constant[value=1]()
        %y = aten::_convolution(%x, %w, %b, %s, %p, %d, %transposed, %op, %g, %false, %false, %true, %true)
        return (%y)"""

_CONV = ("""graph(%x, %w, %b, %s, %p, %d, %g):
        %transposed : bool = prim::Constant[value=0]()
        %zero : int = prim::Constant[value=0]()
        %op : int[] = prim::ListConstruct(%zero)
        """ + _CONVOLUTION)

_CONV_TRANSPOSE = ("""graph(%x, %w, %b, %s, %p, %op, %g, %d):
        %transposed : bool = prim::Constant[value=1]()
        """ + _CONVOLUTION)

_GENERIC = """graph(%x, %w, %b, %s, %p, %d, %transposed, %op, %g):
        """ + _CONVOLUTION

# Only the int[] padding overloads: conv*d.padding (padding="same") keeps its own op.
normalize_convolution = rewrite_pass(
    "normalize_convolution", "Rewrite every convolution form with int[] padding as aten::_convolution.",
    *[(f"aten::conv{n}d", _CONV) for n in (1, 2, 3)],
    *[(op, _CONV_TRANSPOSE) for op in ("aten::conv_transpose1d", "aten::conv_transpose2d.input",
                                       "aten::conv_transpose3d.input")],
    ("aten::convolution", _GENERIC),
)
