"""Arguments of forward that no Input stands for: compiled at their defaults, and checked on every call.

nn.TransformerEncoder's forward takes (src, mask=None, src_key_padding_mask=None, is_causal=None). Compiled with
one Input, its graph is specialized for the defaults (the `if mask is None` branches fold), and the compiled module
raises where a call passes another value, for which its engines were not built.
"""

import torch

from ..errors import TorchTRTError


def bind_defaults(module, given):
    """In the frozen `module`'s forward, replace every use of each argument after the first `given` by its default."""
    graph = module.graph
    first = next(iter(graph.nodes()), graph.return_node())
    for argument, value in _beyond_inputs(module, given):
        with graph.insert_point_guard(first):
            value.replaceAllUsesWith(graph.insertConstant(argument.default_value))


def check_defaults(module, given):
    """At the start of the compiled `module`'s forward, a torch_trt::check_default of each argument after the first
    `given`: `is` None for a None default, torch_trt::same_float for a float one (-0.0 is not 0.0, NaN is NaN), else
    `==`."""
    graph = module.graph
    first = next(iter(graph.nodes()), graph.return_node())
    for argument, value in _beyond_inputs(module, given):
        default = argument.default_value
        comparison = "aten::__is__" if default is None else _COMPARISONS[value.type().kind()]
        with graph.insert_point_guard(first):
            same = graph.create(comparison, [value, graph.insertConstant(default)])
            same.output().setType(torch._C.BoolType.get())
            graph.insertNode(same)
            described = [graph.insertConstant(text) for text in (argument.name, repr(default))]
            graph.insertNode(graph.create("torch_trt::check_default", [same.output(), *described], 0))


_COMPARISONS = {"BoolType": "aten::eq", "IntType": "aten::eq", "StringType": "aten::eq",
                "FloatType": "torch_trt::same_float"}
_PYTHON_TYPES = {"BoolType": bool, "IntType": int, "StringType": str, "FloatType": float}


def _beyond_inputs(module, given):
    """(schema argument, graph input) of each argument of forward after the first `given`; TorchTRTError for one that
    has no default, or whose type no check compares exactly (a Union; an Optional, unless its default is None)."""
    arguments = module.forward.schema.arguments[1:]  # after self
    for position, (argument, value) in enumerate(zip(arguments, list(module.graph.inputs())[1:])):
        if position < given:
            continue
        if not argument.has_default_value():
            raise TorchTRTError(f"forward's argument {argument.name} has no default and no Input stands for it: pass "
                                f"one Input for each argument without a default ({len(arguments)} arguments)")
        default, kind = argument.default_value, value.type().kind()
        if kind == "OptionalType" and default is None or type(default) is _PYTHON_TYPES.get(kind):
            yield argument, value
            continue
        raise TorchTRTError(f"forward's argument {argument.name} has no Input, and its default ({default!r}) of type "
                            f"{value.type()} is not one a compiled module can check calls against: compile a module "
                            f"whose forward passes {argument.name} itself")
