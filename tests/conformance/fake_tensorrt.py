"""A stand-in `tensorrt` module generated from the bindings manifest: right names, no behaviour.

Every class, method, attribute, enum and module attribute of TensorRT 11.4 exists; methods
accept anything and return an object of their declared return class (or a neutral value), so
code written for real TensorRT runs through it. Wrapped by the recorder, it shows which API that
code uses, which the manifest checker then verifies: how torch_trt/targets/tensorrt.py's
TensorRT-only helpers are tested without TensorRT.
"""

import re
import types

from torch_trt.targets.reference.enums import _enum

from .manifest import BUFFERS, Manifest

_NEUTRAL = {"bool": True, "int": 0, "float": 0.0, "str": "", "None": None}


def fake_tensorrt(manifest=None, version=None):
    """A new module named `fake_tensorrt` with TensorRT's API surface (version from the manifest unless given)."""
    manifest = manifest or Manifest()
    module = types.ModuleType("fake_tensorrt")
    module.__version__ = version or manifest.version
    for name, values in manifest.enum_values.items():
        if "." not in name:
            enum = _enum(name, **values)
            enum.__module__ = module.__name__
            setattr(module, name, enum)
    classes = {}
    for name in _base_first(manifest):
        info = manifest.classes[name]
        plain = (bytearray,) if name in BUFFERS else (object,)  # an empty buffer, as a stand-in exports its bytes
        bases = tuple(classes[b] for b in info.get("bases", []) if b in classes) or plain
        namespace = {"__module__": module.__name__, "__init__": lambda self, *args, **kwargs: None}
        classes[name] = type(name, bases, namespace)
    for name, cls in classes.items():
        _fill(cls, manifest.classes[name], manifest, classes, module)
        setattr(module, name, cls)
    for name, member in manifest.module_attributes.items():
        enum, _, member_name = member.partition(".")
        setattr(module, name, getattr(getattr(module, enum), member_name))
    for name in manifest.functions:
        setattr(module, name, _function(name))
    return module


def _base_first(manifest):
    order = []

    def visit(name):
        if name in order or name not in manifest.classes:
            return
        for base in manifest.classes[name].get("bases", []):
            visit(base)
        order.append(name)

    for name in manifest.classes:
        visit(name)
    return order


def _fill(cls, info, manifest, classes, module):
    for nested in (e for e in manifest.enum_values if e.startswith(f"{cls.__name__}.")):
        enum = _enum(nested.split(".", 1)[1], **manifest.enum_values[nested])
        enum.__module__ = module.__name__
        setattr(cls, nested.split(".", 1)[1], enum)
    for name, text in info.get("class_attributes", {}).items():
        match = re.match(r"<(\w+)\.(\w+): -?\d+>", text)
        if match and hasattr(cls, match.group(1)):
            setattr(cls, name, getattr(getattr(cls, match.group(1)), match.group(2)))
    for name in info.get("attributes", []):
        setattr(cls, name, None)
    for name in info.get("methods", {}):
        returns = [s.rsplit("->", 1)[-1].strip() for s in info.get("signatures", {}).get(name, [])]
        setattr(cls, name, _method(name, returns[0] if returns else "None", classes))


def _method(name, returns, classes):
    def method(self, *args, **kwargs):
        if returns in classes:
            return classes[returns].__new__(classes[returns])
        return _NEUTRAL.get(returns)

    method.__name__ = name
    return method


def _function(name):
    def function(*args, **kwargs):
        return None

    function.__name__ = name
    return function
