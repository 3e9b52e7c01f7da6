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
    shape = static_shape(args[0])
    return shape[args[1].to_int()]


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


def _binary(function):
    return lambda ctx, node, args: function(args[0].value, args[1].value)


def _unary(function):
    return lambda ctx, node, args: function(args[0].value)


_BINARY = {
    "aten::add.int(int a, int b) -> int": operator.add,
    "aten::sub.int(int a, int b) -> int": operator.sub,
    "aten::mul.int(int a, int b) -> int": operator.mul,
    "aten::floordiv.int(int a, int b) -> int": operator.floordiv,
    "aten::remainder.int(int a, int b) -> int": operator.mod,
    "aten::div.int(int a, int b) -> float": operator.truediv,
    "aten::add.float(float a, float b) -> float": operator.add,
    "aten::sub.float(float a, float b) -> float": operator.sub,
    "aten::mul.float(float a, float b) -> float": operator.mul,
    "aten::div.float(float a, float b) -> float": operator.truediv,
    "aten::pow.int(int a, int b) -> float": lambda a, b: float(a ** b),
    "aten::eq.int(int a, int b) -> bool": operator.eq,
    "aten::ne.int(int a, int b) -> bool": operator.ne,
    "aten::lt.int(int a, int b) -> bool": operator.lt,
    "aten::gt.int(int a, int b) -> bool": operator.gt,
    "aten::le.int(int a, int b) -> bool": operator.le,
    "aten::ge.int(int a, int b) -> bool": operator.ge,
    "aten::eq.float(float a, float b) -> bool": operator.eq,
    "aten::lt.float(float a, float b) -> bool": operator.lt,
    "aten::gt.float(float a, float b) -> bool": operator.gt,
    "aten::__and__.bool(bool a, bool b) -> bool": operator.and_,
    "aten::__or__.bool(bool a, bool b) -> bool": operator.or_,
}
_UNARY = {
    "aten::neg.int(int a) -> int": operator.neg,
    "aten::neg.float(float a) -> float": operator.neg,
    "aten::Int.float(float a) -> int": int,
    "aten::Float.int(int a) -> float": float,
    "aten::Float.Scalar(Scalar a) -> float": float,
    "aten::Int.Scalar(Scalar a) -> int": int,
    "aten::floor.float(float a) -> int": math.floor,
    "aten::ceil.float(float a) -> int": math.ceil,
    "aten::__not__(bool self) -> bool": operator.not_,
}
for _schema, _function in _BINARY.items():
    evaluator(_schema)(_binary(_function))
for _schema, _function in _UNARY.items():
    evaluator(_schema)(_unary(_function))
