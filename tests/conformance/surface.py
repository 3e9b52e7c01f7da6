"""The reference target's public surface, checked against the bindings manifest (the reverse direction).

Every public name the reference module exports, every public attribute and method its classes
define (in the class, its reference-defined bases, a layer's `_attributes`, or `self.x = ...` in
a method), every enum member and its value, and every method's parameter names must exist in
TensorRT 11.4; an attribute the reference lets you set must be writable there too. Names
starting with `_` are the reference's internals; submodules (reference.types, ...) are not API.
"""

import ast
import inspect
import textwrap
import types

from .manifest import PYTHON_EXTRAS

_ENUM_ATTRIBUTES = {"name", "value"}  # what pybind11 enum members carry


def surface_problems(module, manifest):
    """Messages for every public name of `module` (the reference) that TensorRT 11.4 does not have."""
    problems, package = [], module.__name__
    for name in sorted(n for n in dir(module) if not n.startswith("_")):
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            continue
        problem = manifest.check_module_name(name)
        if problem:
            problems.append(f"reference exports {name}: {problem}")
        elif isinstance(value, type) and value.__name__ == name:
            problems += _class_problems(value, name, package, manifest)
    return problems


def _class_problems(cls, name, package, manifest):
    if hasattr(cls, "__members__"):
        return _enum_problems(cls, name, manifest)
    problems = []
    for member, (kind, value) in sorted(_members(cls, package).items()):
        if isinstance(value, type) and hasattr(value, "__members__"):
            problems += _enum_problems(value, f"{name}.{member}", manifest)
            continue
        if manifest.member(name, member) is None:
            problems.append(f"reference {name}.{member} does not exist in TensorRT {manifest.version}")
            continue
        if kind == "settable":
            problem = manifest.check_attribute(name, member, "set")
            if problem:
                problems.append(f"reference lets you set {name}.{member}, but {problem}")
        if kind == "method":
            problems += _signature_problems(value, name, member, manifest)
    for constructor in ("__init__", "__new__"):
        function = _own(cls, constructor, package)
        if function is not None and manifest.overloads(name, "__init__") is not None:
            problems += _signature_problems(function, name, "__init__", manifest)
    return problems


def _enum_problems(cls, name, manifest):
    problems, enum = [], manifest.enum_name(name)
    if enum is None:
        return [f"reference enum {name} does not exist in TensorRT {manifest.version}"]
    values = manifest.enum_values.get(enum, {})
    for member_name, member in cls.__members__.items():
        if member_name not in manifest.enums[enum]:
            problems.append(f"reference {name}.{member_name} is not a member of {enum} in TensorRT {manifest.version}")
        elif values.get(member_name, member.value) != member.value:
            problems.append(f"reference {name}.{member_name} = {member.value}, TensorRT {manifest.version} has "
                            f"{values[member_name]}")
    for attribute in (n for n in vars(cls) if not n.startswith("_") and n not in cls.__members__):
        if attribute not in _ENUM_ATTRIBUTES and (cls.__name__, attribute) not in PYTHON_EXTRAS:
            problems.append(f"reference {name}.{attribute} is not an attribute of TensorRT's {enum}")
    return problems


def _members(cls, package):
    """Public name -> (method | settable | readonly | constant, value) over the class and its reference bases."""
    found = {}
    for base in reversed([b for b in cls.__mro__ if b.__module__.startswith(package)]):
        for name, value in vars(base).items():
            if name.startswith("_"):
                continue
            if isinstance(value, property):
                found[name] = ("settable" if value.fset else "readonly", value)
            elif inspect.isfunction(value):
                found[name] = ("method", value)
            else:
                found[name] = ("constant", value)
        for name in _assigned_in_methods(base):
            found.setdefault(name, ("settable", None))
    for name in getattr(cls, "_attributes", ()):
        if not name.startswith("_"):
            kind = found.get(name, ("settable", None))
            found[name] = ("settable", kind[1])
    if hasattr(cls, "_layer_type"):  # ILayer.__setattr__ lets these through on every layer
        for name in ("name", "metadata", "num_ranks"):
            found.setdefault(name, ("settable", None))
    return found


def _assigned_in_methods(cls):
    """Public attribute names a class's methods assign on self (`self.x = ...`)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return set()
    names = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name) \
                        and element.value.id == "self" and not element.attr.startswith("_"):
                    names.add(element.attr)
    return names


def _own(cls, name, package):
    for base in cls.__mro__:
        if base.__module__.startswith(package) and name in vars(base):
            return vars(base)[name]
    return None


def _signature_problems(function, owner, method, manifest):
    """Each reference parameter must be the real parameter at that position in some overload (arg0... match any)."""
    overloads = manifest.overloads(owner, method)
    if not overloads:
        return []
    parameters = [p for p in inspect.signature(function).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][1:]  # drop self/cls
    problems = []
    for position, parameter in enumerate(parameters):
        if parameter.kind == parameter.KEYWORD_ONLY:
            if not any(parameter.name in [n for n, _ in real] for real in overloads):
                problems.append(f"reference {owner}.{method} keyword {parameter.name!r} is no parameter of TensorRT "
                                f"{manifest.version}'s {owner}.{method}")
            continue
        if not any(position < len(real) and (real[position][0] == parameter.name or real[position][0].startswith("arg"))
                   for real in overloads):
            names = " | ".join("(" + ", ".join(n for n, _ in real) + ")" for real in overloads)
            problems.append(f"reference {owner}.{method} parameter {position} is {parameter.name!r}; TensorRT "
                            f"{manifest.version} has {names}")
    return problems
