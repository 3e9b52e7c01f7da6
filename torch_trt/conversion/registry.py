"""Converter and evaluator registries, keyed by the parsed schema's (name, overload_name).

`@converter(schema)` registers a function that adds layers for a node; `@evaluator(kind or
schema)` registers one that computes a node's value at compile time. Schemas are parsed once
at import; an unparseable or duplicate registration is an error at import.
"""

import functools
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import torch


@dataclass(frozen=True)
class Registration:
    """A converter or evaluator with its parsed schema and optional `supports(node, settings)` check."""

    function: Callable
    schema: Optional[torch._C.FunctionSchema]
    supports: Optional[Callable] = None


CONVERTERS: dict = {}
EVALUATORS: dict = {}


def _parse(schema):
    try:
        return torch._C.parse_schema(schema)
    except RuntimeError as error:
        raise ValueError(f"cannot parse schema {schema!r}: {error}") from None


def _register(table, key, registration, what):
    if key in table:
        previous = table[key].function
        raise ValueError(f"duplicate {what} for {key}: {previous.__module__}.{previous.__name__} is already registered")
    table[key] = registration


def converter(schema, supports=None):
    """Register a converter `(ctx, node, args) -> outputs` for a full TorchScript schema string."""
    parsed = _parse(schema)

    def register(function):
        _register(CONVERTERS, (parsed.name, parsed.overload_name), Registration(function, parsed, supports), "converter")
        return function

    return register


def converter_table(table, convert, doc):
    """Register `convert(ctx, node, args, value)` for each `schema: value` row of `table`: one family, one builder.

    Each row's converter is named after its schema (aten::sum.dim_IntList -> sum_dim_IntList), documented by
    `doc` formatted with the row's value, and belongs to the module that calls this, the one holding the table
    (as collections.namedtuple sets __module__), so a duplicate registration names that module's converter.
    """
    module = sys._getframe(1).f_globals["__name__"]
    for schema, value in table.items():
        converter(schema)(_table_row(convert, value, _function_name(schema), module, doc.format(value)))


def _table_row(convert, value, name, module, doc):
    def function(ctx, node, args):
        return convert(ctx, node, args, value)

    function.__name__ = function.__qualname__ = name
    function.__module__, function.__doc__ = module, doc
    return function


def _function_name(schema):
    """`sum_dim_IntList` for aten::sum.dim_IntList(...): the operator and overload as a Python name."""
    return schema.split("(", 1)[0].split("::", 1)[1].replace(".", "_")


def evaluator(kind_or_schema, supports=None):
    """Register an evaluator `(ctx, node, args) -> value(s)` for a node kind (any overload) or a schema."""
    parsed = _parse(kind_or_schema) if "(" in kind_or_schema else None
    key = (parsed.name, parsed.overload_name) if parsed else kind_or_schema

    def register(function):
        _register(EVALUATORS, key, Registration(function, parsed, supports), "evaluator")
        return function

    return register


def node_schema(node):
    """The node's matched FunctionSchema, parsed once per schema text; None for nodes without one (prim ops)."""
    return _parse_node_schema(node.schema())


@functools.lru_cache(maxsize=None)
def _parse_node_schema(text):
    return None if text == "(no schema)" else torch._C.parse_schema(text)


def schema_key(node):
    """(name, overload_name) of the node's matched schema, or None for nodes without one."""
    schema = node_schema(node)
    return schema and (schema.name, schema.overload_name)


def find_converter(node):
    key = schema_key(node)
    return CONVERTERS.get(key) if key else None


def find_evaluator(node):
    key = schema_key(node)
    return EVALUATORS.get(key) or EVALUATORS.get(node.kind())
