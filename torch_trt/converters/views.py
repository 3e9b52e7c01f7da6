"""View converters: reshape/reshape_as/flatten/unflatten, permute/transpose/t, squeeze/unsqueeze, each one
IShuffleLayer; contiguous, the identity.

Reshapes go through `_helpers.reshape_torch_sizes`, which keeps one dynamic dim (or dynamic leading dims) working
with TensorRT's -1 (infer) and 0 (copy); sizes known only at run time (of dynamic dims) reshape through a
shape tensor; transposes are the shuffle's `first_transpose`. aten::view itself has no converter: lowering
rewrites every aten::view as aten::reshape.
"""

import math

from ..conversion import shape_tensors
from ..conversion.registry import converter
from ._helpers import drop_unit_dims, normalize_dim, rank, reshape_torch_sizes, unsqueeze as unsqueeze_tensor


def _permute(ctx, node, x, order):
    layer = ctx.net.add_shuffle(x)
    layer.first_transpose = tuple(order)
    return ctx.set_output(node, layer)


@converter("aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
def reshape(ctx, node, args):
    """Reshape to the given sizes; PyTorch's -1 is TensorRT's -1, a 0 is a zero-length dim."""
    return ctx.set_output(node, [reshape_torch_sizes(ctx, args[0].itensor(), shape_tensors.int_list(ctx, args[1]))])


@converter("aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)")
def reshape_as(ctx, node, args):
    """Reshape to other's shape (dynamic dims of other are read at run time)."""
    x, other = args[0].itensor(), args["other"].itensor()
    return ctx.set_output(node, [reshape_torch_sizes(ctx, x, shape_tensors.shape_of(ctx, other))])


@converter("aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)")
def unflatten(ctx, node, args):
    """Split dim `dim` into `sizes` (one of them may be -1); the other dims are kept."""
    x = args[0].itensor()
    dim, sizes = normalize_dim(args["dim"].to_int(), rank(x)), args["sizes"].to_int_list()
    if x.shape[dim] == -1 and -1 not in sizes:
        sizes = [-1 if i == 0 else d for i, d in enumerate(sizes)]  # the dynamic dim's first part is inferred
    shape = list(x.shape[:dim]) + sizes + list(x.shape[dim + 1:])
    return ctx.set_output(node, [reshape_torch_sizes(ctx, x, shape, copied=dim)])


@converter("aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)")
def flatten(ctx, node, args):
    """Merge dims start_dim..end_dim into one (a 0-D tensor becomes 1-D)."""
    x = args[0].itensor()
    shape = list(x.shape)
    start, end = (normalize_dim(args[name].to_int(), max(rank(x), 1)) for name in ("start_dim", "end_dim"))
    if start > end:
        raise ValueError(f"flatten start_dim {start} is after end_dim {end}")
    if -1 in shape[start:end + 1] and -1 in shape[end + 1:]:  # two dims to infer: the sizes come at run time
        sizes = shape_tensors.shape_of(ctx, x)
        return ctx.set_output(node, [reshape_torch_sizes(ctx, x, sizes[:start] + [-1] + sizes[end + 1:])])
    merged = shape[start:end + 1]
    merged = -1 if -1 in merged else math.prod(merged)
    merged_shape = shape[:start] + [merged] + shape[end + 1:]
    return ctx.set_output(node, [reshape_torch_sizes(ctx, x, merged_shape, copied=start)])


_ROW_MAJOR = (0, 1)  # MemoryFormat's contiguous_format and preserve_format, as TorchScript constants hold them


def _row_major(node, settings):
    """Engines hold tensors row-major, without strides: a channels-last tensor is left to PyTorch to make."""
    memory_format = node.namedInput("memory_format")
    return memory_format.node().kind() == "prim::Constant" and memory_format.toIValue() in _ROW_MAJOR


@converter("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
           supports=_row_major)
def contiguous(ctx, node, args):
    """The tensor itself, with no layer (an identity layer is a copy): every tensor of an engine is contiguous."""
    return ctx.set_output(node, [args[0].itensor()])


@converter("aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)")
def permute(ctx, node, args):
    """Reorder the dims (negative dims allowed)."""
    x = args[0].itensor()
    return _permute(ctx, node, x, [normalize_dim(d, rank(x)) for d in args["dims"].to_int_list()])


@converter("aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
def transpose(ctx, node, args):
    """Swap two dims."""
    x = args[0].itensor()
    order = list(range(rank(x)))
    a, b = (normalize_dim(args[name].to_int(), rank(x)) for name in ("dim0", "dim1"))
    order[a], order[b] = order[b], order[a]
    return _permute(ctx, node, x, order)


@converter("aten::t(Tensor(a) self) -> Tensor(a)")
def t(ctx, node, args):
    """Transpose a 2-D tensor; 0-D and 1-D tensors pass unchanged."""
    x = args[0].itensor()
    if rank(x) > 2:
        raise ValueError(f"t expects a tensor of at most 2 dims, got {rank(x)}")
    return _permute(ctx, node, x, reversed(range(rank(x))))


@converter("aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")
def unsqueeze(ctx, node, args):
    """Insert a size-1 dim at `dim`."""
    return ctx.set_output(node, [unsqueeze_tensor(ctx, args[0].itensor(), args["dim"].to_int())])


def _squeeze(ctx, node, x, dims):
    """Drop those of `dims` whose size is 1 (others stay, as in PyTorch); dims of dynamic size are refused."""
    shape = list(x.shape)
    dims = [d for d in dims if d < len(shape)]  # dim 0 or -1 of a 0-D tensor names no dim
    dynamic = [d for d in dims if shape[d] == -1]
    if dynamic:
        raise NotImplementedError(f"squeeze of dim(s) {dynamic} of dynamic size in {tuple(shape)}")
    return ctx.set_output(node, [drop_unit_dims(ctx, x, [d for d in dims if shape[d] == 1])])


@converter("aten::squeeze(Tensor(a) self) -> Tensor(a)")
def squeeze(ctx, node, args):
    """Drop every static size-1 dim; a dynamic dim stays even when it is 1 at run time (as in ISqueezeLayer)."""
    x = args[0].itensor()
    return _squeeze(ctx, node, x, [d for d, n in enumerate(x.shape) if n == 1])


@converter("aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)")
@converter("aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)")
def squeeze_dims(ctx, node, args):
    """Drop the named dims where their size is 1."""
    x = args[0].itensor()
    return _squeeze(ctx, node, x, [normalize_dim(d, max(rank(x), 1)) for d in args["dim"].to_int_list()])
