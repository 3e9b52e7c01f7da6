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
    `given`: `is` None for a None default, else `==`."""
    graph = module.graph
    first = next(iter(graph.nodes()), graph.return_node())
    for argument, value in _beyond_inputs(module, given):
        default = argument.default_value
        with graph.insert_point_guard(first):
            same = graph.create("aten::__is__" if default is None else "aten::eq",
                                [value, graph.insertConstant(default)])
            same.output().setType(torch._C.BoolType.get())
            graph.insertNode(same)
            described = [graph.insertConstant(text) for text in (argument.name, repr(default))]
            graph.insertNode(graph.create("torch_trt::check_default", [same.output(), *described], 0))


def _beyond_inputs(module, given):
    """(schema argument, graph input) of each argument of forward after the first `given`; TorchTRTError
    for one that has no default, or a default no check compares (one of an Optional type but None)."""
    arguments = module.forward.schema.arguments[1:]  # after self
    for position, (argument, value) in enumerate(zip(arguments, list(module.graph.inputs())[1:])):
        if position < given:
            continue
        if not argument.has_default_value():
            raise TorchTRTError(f"forward's argument {argument.name} has no default and no Input stands for it: pass "
                                f"one Input for each argument without a default ({len(arguments)} arguments)")
        default = argument.default_value
        if default is not None and (not isinstance(default, (bool, int, float, str)) or
                                    isinstance(value.type(), torch._C.OptionalType)):
            raise TorchTRTError(f"forward's argument {argument.name} has no Input, and its default ({default!r}) of "
                                f"type {value.type()} is not one a compiled module can check calls against: compile a "
                                f"module whose forward passes {argument.name} itself")
        yield argument, value
