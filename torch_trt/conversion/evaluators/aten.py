"""Evaluators for aten ops on compile-time values: sizes of static shapes, int/float arithmetic, lists."""

import math
import operator

import torch

from ..registry import evaluator


def static_shape(arg):
    """The static shape of a tensor argument (ITensor or constant); error on dynamic dims."""
    shape = tuple(arg.value.shape)
    if -1 in shape:
        raise ValueError(f"the shape {shape} has dynamic dims; this op needs static dims")
    return list(shape)


@evaluator("aten::size(Tensor self) -> int[]")
def size(ctx, node, args):
    return static_shape(args[0])


@evaluator("aten::size.int(Tensor self, int dim) -> int")
def size_dim(ctx, node, args):
    size = tuple(args[0].value.shape)[args[1].to_int()]
    if size == -1:
        raise ValueError(f"dim {args[1].to_int()} of {tuple(args[0].value.shape)} is dynamic; its size is known at run "
                         "time only")
    return size


@evaluator("aten::dim(Tensor self) -> int")
def dim(ctx, node, args):
    return len(args[0].value.shape)


@evaluator("aten::len.t(t[] a) -> int")
def length(ctx, node, args):
    return len(args[0].value)


@evaluator("aten::__getitem__.t(t[](a) list, int idx) -> t(*)")
def getitem(ctx, node, args):
    return args[0].value[args[1].to_int()]


@evaluator("aten::Int.Tensor(Tensor a) -> int")
def int_of_tensor(ctx, node, args):
    return int(args[0].to_tensor().item())


@evaluator("aten::Float.Tensor(Tensor a) -> float")
def float_of_tensor(ctx, node, args):
    return float(args[0].to_tensor().item())


@evaluator("aten::ScalarImplicit(Tensor a) -> Scalar")
def scalar_implicit(ctx, node, args):
    return args[0].to_tensor().item()


_SCALAR_TYPES = {"int", "float", "bool", "Scalar"}

# Python semantics of TorchScript's scalar ops; every overload on ints, floats, bools and Scalars is registered.
_SCALAR_OPS = {
    "aten::add": operator.add, "aten::sub": operator.sub, "aten::mul": operator.mul, "aten::div": operator.truediv,
    "aten::floordiv": operator.floordiv, "aten::remainder": operator.mod, "aten::pow": operator.pow,
    "aten::eq": operator.eq, "aten::ne": operator.ne, "aten::lt": operator.lt, "aten::gt": operator.gt,
    "aten::le": operator.le, "aten::ge": operator.ge, "aten::__and__": operator.and_, "aten::__or__": operator.or_,
    "aten::neg": operator.neg, "aten::__not__": operator.not_, "aten::Int": int, "aten::Float": float,
    "aten::floor": math.floor, "aten::ceil": math.ceil, "aten::sqrt": math.sqrt,
}


def _scalar_evaluator(function, returns):
    cast = {"int": int, "float": float, "bool": bool}.get(returns, lambda value: value)
    return lambda ctx, node, args: cast(function(*(arg.value for arg in args)))


for _name, _function in _SCALAR_OPS.items():
    for _schema in torch._C._jit_get_schemas_for_operator(_name):
        _types = [str(a.type) for a in _schema.arguments] + [str(r.type) for r in _schema.returns]
        if len(_schema.returns) == 1 and all(t in _SCALAR_TYPES for t in _types):
            evaluator(str(_schema))(_scalar_evaluator(_function, _types[-1]))
