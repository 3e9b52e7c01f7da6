"""Evaluators for aten ops on compile-time values and runtime ints: sizes, int/float arithmetic, lists.

Sizes of static dims and arithmetic on them and on constants are Python values. The size of a dynamic dim
is a runtime int (a 0-D INT64 shape tensor, see conversion/shape_tensors.py), and int arithmetic on runtime
ints adds the element-wise layers that compute it inside the engine. RUNTIME_INT_OPS names the node kinds
that can compute a runtime int: partitioning keeps the others in PyTorch when their value varies.
"""

import math
import operator

import torch

from ..registry import evaluator
from ..shape_tensors import arithmetic, as_int64, dim_size, is_runtime, remainder, shape_of


@evaluator("aten::size(Tensor self) -> int[]")
def size(ctx, node, args):
    """Every dim's size: ints for static dims, runtime ints for dynamic ones."""
    value = args[0].value
    return shape_of(ctx, value) if args[0].is_itensor() else list(value.shape)


@evaluator("aten::size.int(Tensor self, int dim) -> int")
def size_dim(ctx, node, args):
    """One dim's size: an int when static, a runtime int when dynamic."""
    value, dim = args[0].value, args[1].to_int()
    rank = len(value.shape)
    if not -rank <= dim < rank:
        raise IndexError(f"dim {dim} is out of range for a tensor of rank {rank}")
    return dim_size(ctx, value, dim % rank) if args[0].is_itensor() else value.shape[dim]


@evaluator("aten::dim(Tensor self) -> int")
def dim(ctx, node, args):
    return len(args[0].value.shape)


@evaluator("aten::len.t(t[] a) -> int")
def length(ctx, node, args):
    return len(args[0].value)


@evaluator("aten::__getitem__.t(t[](a) list, int idx) -> t(*)")
def getitem(ctx, node, args):
    return args[0].value[args[1].to_int()]


@evaluator("aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]")
def list_slice(ctx, node, args):
    """l[start:end:step], as Python slices a list (`x.shape[-2:]`)."""
    start, end = (args[name].optional(lambda arg: arg.to_int()) for name in ("start", "end"))
    return args[0].value[start:end:args["step"].to_int()]


@evaluator("aten::Int.Tensor(Tensor a) -> int")
def int_of_tensor(ctx, node, args):
    """The int in a 0-D tensor: a constant's, or a runtime int (partitioning lets only sizes in, see support.py)."""
    if args[0].is_itensor():
        return as_int64(ctx, args[0].value)
    return int(args[0].to_tensor().item())


@evaluator("aten::Float.Tensor(Tensor a) -> float")
def float_of_tensor(ctx, node, args):
    return float(args[0].to_tensor().item())


@evaluator("aten::ScalarImplicit(Tensor a) -> Scalar")
def scalar_implicit(ctx, node, args):
    """The number in a 0-D tensor; a runtime int stays one."""
    if args[0].is_itensor():
        return as_int64(ctx, args[0].value)
    return args[0].to_tensor().item()


_SCALAR_TYPES = {"int", "float", "bool", "number"}  # "number": how a schema names a Scalar argument's type

# Python semantics of TorchScript's scalar ops; every overload on ints, floats, bools and Scalars is registered.
_SCALAR_OPS = {
    "aten::add": operator.add, "aten::sub": operator.sub, "aten::mul": operator.mul, "aten::div": operator.truediv,
    "aten::floordiv": operator.floordiv, "aten::remainder": operator.mod, "aten::pow": operator.pow,
    "aten::eq": operator.eq, "aten::ne": operator.ne, "aten::lt": operator.lt, "aten::gt": operator.gt,
    "aten::le": operator.le, "aten::ge": operator.ge, "aten::__and__": operator.and_, "aten::__or__": operator.or_,
    "aten::neg": operator.neg, "aten::__not__": operator.not_, "aten::Int": int, "aten::Float": float,
    "aten::floor": math.floor, "aten::ceil": math.ceil, "aten::sqrt": math.sqrt,
}

# The same ops on runtime ints, by kind: layers computing the int result inside the engine.
_RUNTIME_INT_OPS = {
    "aten::add": lambda ctx, a, b: arithmetic(ctx, "SUM", a, b),
    "aten::sub": lambda ctx, a, b: arithmetic(ctx, "SUB", a, b),
    "aten::mul": lambda ctx, a, b: arithmetic(ctx, "PROD", a, b),
    "aten::floordiv": lambda ctx, a, b: arithmetic(ctx, "FLOOR_DIV", a, b),
    "aten::remainder": remainder,
    "aten::neg": lambda ctx, a: arithmetic(ctx, "SUB", 0, a),
    "aten::Int": as_int64, "aten::floor": as_int64, "aten::ceil": as_int64,
}
RUNTIME_INT_OPS = frozenset(_RUNTIME_INT_OPS) | {"aten::size", "aten::Int", "aten::ScalarImplicit", "aten::len",
                                                 "aten::__getitem__", "aten::dim", "prim::ListConstruct",
                                                 "prim::ListUnpack", "prim::TupleConstruct", "prim::TupleUnpack",
                                                 "prim::TupleIndex", "prim::NumToTensor", "prim::min", "prim::max",
                                                 "aten::slice"}  # of a list (x.shape[-2:]): glue holds no tensor


def _scalar_evaluator(kind, function, types):
    """The evaluator of one overload: Python's `function` on compile-time values, layers on runtime ints."""
    cast = {"int": int, "float": float, "bool": bool}.get(types[-1], lambda value: value)

    def evaluate(ctx, node, args):
        values = [arg.value for arg in args]
        if not any(is_runtime(ctx, v) for v in values):
            return cast(function(*values))
        if kind not in _RUNTIME_INT_OPS or any(t not in ("int", "number") for t in types):
            raise NotImplementedError(f"{node.kind()} of a runtime size computes no int inside an engine")
        return _RUNTIME_INT_OPS[kind](ctx, *values)

    return evaluate


for _name, _function in _SCALAR_OPS.items():
    for _schema in torch._C._jit_get_schemas_for_operator(_name):
        _types = [str(a.type) for a in _schema.arguments] + [str(r.type) for r in _schema.returns]
        if len(_schema.returns) == 1 and all(t in _SCALAR_TYPES for t in _types):
            evaluator(str(_schema))(_scalar_evaluator(_name, _function, _types))
