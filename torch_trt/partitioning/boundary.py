"""Dtypes an engine holds differently from PyTorch, the casts at its boundary, and what that costs int8 and uint8.

Two kinds of tensors cross an engine's boundary cast: int64/float64 narrowed to int32/float32 when
truncate_long_and_double allows it, and int8/uint8, which TensorRT takes only between Q/DQ layers (int8) or as IO
cast to float/half (uint8), widened to int32. The stitched graph casts such an input before the engine call and
casts such an output back after it (the engine gives it as int32), so the converters see int32 tensors. A uint8
input the engine only casts to float32/float16 stays uint8, as TensorRT takes it.

int32 holds every int8 and uint8 value, but PyTorch computes them in their own dtype and wraps on overflow
(int8 100 * 3 is 44). Inside an engine a small-int value is exact, or, once add, sub, mul or neg computed it,
only congruent modulo 256 to PyTorch's. Casting back at the boundary makes a congruent value exact again, and ops
that only move elements keep congruence; any other op reading a congruent value (a division, a comparison, a
cast to float) would see the unwrapped number, so it runs in PyTorch, on the value cast back
(`overflow_demotions`). Other ops computing a small-int result from small ints (floor division, abs, ...) run in
PyTorch too (`small_int_problem`): PyTorch wraps their scalar arguments to the small dtype first, which int32
cannot mirror; ops that pick among their small-int inputs' values (relu, clamp, max, topk, sort, ...) cannot
overflow. A number such an op or a comparison meets is wrapped to the small dtype too (uint8 x > -3 is x > 253): one
outside the dtype's range, or a 0-d int tensor of another dtype, sends the op to PyTorch (`wrapped_number`).
"""

import torch

from ..errors import Code, Reason
from ..targets.dtypes import TRUNCATED_DTYPES

SMALL_INTS = {torch.int8: torch.int32, torch.uint8: torch.int32}  # small-int dtype -> the dtype engines hold it in
HELD_DTYPES = {**TRUNCATED_DTYPES, **SMALL_INTS}  # dtype -> the dtype an engine holds it in when cast at its boundary
_UINT8_TAKERS = (torch.float32, torch.float16)  # what TensorRT casts a UINT8 input to

WRAPPING_OPS = {"aten::add", "aten::sub", "aten::rsub", "aten::mul", "aten::neg"}  # exact modulo 256
MOVING_OPS = {"aten::cat", "aten::chunk", "aten::clone", "aten::contiguous", "aten::detach", "aten::expand",
              "aten::expand_as", "aten::flatten", "aten::flip", "aten::gather", "aten::index", "aten::index_select",
              "aten::masked_fill", "aten::narrow", "aten::permute", "aten::repeat", "aten::reshape", "aten::roll",
              "aten::select", "aten::slice", "aten::split", "aten::split_with_sizes", "aten::squeeze", "aten::stack",
              "aten::t", "aten::tile", "aten::transpose", "aten::unbind", "aten::unflatten", "aten::unsafe_chunk",
              "aten::unsafe_split", "aten::unsafe_split_with_sizes", "aten::unsqueeze", "aten::view", "aten::where",
              "prim::ListUnpack", "prim::TupleUnpack", "aten::__getitem__"}  # outputs hold elements of the inputs
SELECTING_OPS = {"aten::relu", "aten::clamp", "aten::clamp_min", "aten::clamp_max", "aten::maximum", "aten::minimum",
                 "aten::max", "aten::min", "aten::amax", "aten::amin", "aten::topk", "aten::sort"}  # pick by value
_CONTAINERS = {"prim::ListConstruct", "prim::TupleConstruct"}  # glue packing tensors: read through


def held_dtype(dtype, settings):
    """The dtype an engine holds a tensor of `dtype` in, when that is another one; else None."""
    if dtype in TRUNCATED_DTYPES and not settings.truncate_long_and_double:
        return None
    return HELD_DTYPES.get(dtype)


def input_cast(value, infos, settings, segment_nodes):
    """The dtype the engine of `segment_nodes` takes input `value` in, when it is cast on entering; else None."""
    dtype = infos[value].dtype
    readers = [use.user for use in value.uses() if use.user in segment_nodes]
    if dtype == torch.uint8 and all(_casts_to(reader, _UINT8_TAKERS, infos) for reader in readers):
        return None
    return held_dtype(dtype, settings)


def output_cast(info, settings):
    """The dtype an engine output is cast back to after the call, when the engine holds it in another; else None."""
    return info.dtype if held_dtype(info.dtype, settings) else None


def _casts_to(node, dtypes, infos):
    return node.kind() == "aten::to" and all(v in infos and infos[v].dtype in dtypes for v in node.outputs())


def small_int_problem(node, facts):
    """Why `node` may not compute a small-int result from small ints in an engine, or compare or pick among small
    ints by a number PyTorch wraps to their dtype first; else None."""
    read = [_dtype(facts.info(v)) for v in _tensors_read(node)]
    read = [dtype for dtype in read if dtype is not None]  # tensors shape analysis saw (not constants)
    if not SMALL_INTS.keys() & set(read) or node.kind() in WRAPPING_OPS | MOVING_OPS:
        return None
    wrapped = wrapped_number(node, facts)
    if wrapped is not None:
        return Reason(Code.DTYPE, f"reads {wrapped}, which PyTorch wraps to the int8/uint8 of the tensor it meets "
                                  "(uint8 -3 is 253); in an engine's int32 it would not wrap")
    if node.kind() in SELECTING_OPS and all(dtype in SMALL_INTS for dtype in read):
        return None
    for value in node.outputs():
        if _dtype(facts.info(value)) in SMALL_INTS:
            dtype = str(facts.info(value).dtype).replace("torch.", "")
            return Reason(Code.DTYPE, f"computes the {dtype} %{value.debugName()}: TensorRT has no {dtype} "
                                      "arithmetic, and in int32 it could differ from PyTorch, which wraps "
                                      f"scalars and results to {dtype}")
    return None


def wrapped_number(node, facts):
    """How `node` names a number it reads that PyTorch would wrap to the small-int dtype of a tensor it meets: an int
    outside that dtype's range (a Scalar argument, or a 0-d int tensor constant), or a 0-d int tensor of another dtype
    known only when it runs; else None."""
    small = [dtype for dtype in (_dtype(facts.info(v)) for v in _tensors_read(node)) if dtype in SMALL_INTS]
    if not small or node.schema() == "(no schema)":
        return None
    bounds = torch.iinfo(small[0])
    for argument, value in zip(torch._C.parse_schema(node.schema()).arguments, node.inputs()):
        kind = _unwrapped(argument.type).kind()
        number = _constant_int(value) if kind in ("NumberType", "TensorType") else None
        if number is not None and not bounds.min <= number <= bounds.max:
            return f"the number {number}"
        held = facts.info(value) if kind == "TensorType" and value.node().kind() != "prim::Constant" else None
        if getattr(held, "opt_shape", None) == () and _wider_int(held.dtype):
            return f"the 0-d {str(held.dtype).replace('torch.', '')} tensor %{value.debugName()}"
    return None


def _unwrapped(type_):
    return type_.getElementType() if type_.kind() == "OptionalType" else type_


def _constant_int(value):
    """The int a constant holds: a Python int, or a 0-d tensor of a wider int dtype; else None."""
    node = value.node()
    if node.kind() != "prim::Constant" or not node.hasAttribute("value"):
        return None
    if value.type().kind() == "TensorType":
        tensor = node.t("value")
        return int(tensor) if tensor.dim() == 0 and _wider_int(tensor.dtype) else None
    number = value.toIValue()
    return number if type(number) is int else None


def _wider_int(dtype):
    return not dtype.is_floating_point and not dtype.is_complex and dtype not in (*SMALL_INTS, torch.bool)


def overflow_demotions(run, infos):
    """{node: Reason} for the nodes of an engine run that read a small-int value the run computed modulo 256 and
    need it exact (see the module docstring); their inputs then reach them from PyTorch, cast back and exact."""
    congruent, demoted = set(), {}
    for node in run:
        wrapped = [v for v in _tensors_read(node) if v in congruent]
        small = [v for v in node.outputs() if _dtype(infos.get(v)) in SMALL_INTS]
        keeps = node.kind() in WRAPPING_OPS | MOVING_OPS and \
            all(_dtype(infos.get(v)) in (None, *SMALL_INTS) for v in node.outputs())  # no tensor of another dtype
        if wrapped and not keeps:
            demoted[node] = Reason(Code.DTYPE, f"reads %{wrapped[0].debugName()}, which the engine computes in "
                                               "int32 where PyTorch wraps it to int8/uint8 on overflow; this op "
                                               "needs the wrapped value")
        elif node.kind() in MOVING_OPS:
            congruent.update(node.outputs() if wrapped else [])
        elif node.kind() not in SELECTING_OPS:
            congruent.update(small)
    return demoted


def _tensors_read(node):
    """The values `node` reads, with the tensors of lists and tuples packed for it read through."""
    for value in node.inputs():
        if value.node().kind() in _CONTAINERS:
            yield from _tensors_read(value.node())
        else:
            yield value


def _dtype(info):
    """A TensorInfo's dtype; None for plain values (ValueInfo) and values shape analysis did not record."""
    return getattr(info, "dtype", None)
