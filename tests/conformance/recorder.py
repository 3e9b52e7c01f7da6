"""Record every use of the network API the pipeline makes, to check it against TensorRT's real bindings.

`install()` wraps `torch_trt.targets.resolve_target` in the pipeline's modules that imported it (the
function itself and its cache are left as they are), so the API module the pipeline gets is a proxy;
conformance/plugin.py installs it around each test. Everything crossing that boundary is wrapped on
the way out (classes, enum classes, module functions, and instances of the target's classes: builder,
network, layers, tensors, config, profile, runtime, engine, context, host memory, weights) and unwrapped
on the way in, so the target only ever sees its own objects. Each proxy logs what is done to it
before doing it, so a call the target refuses is still recorded:

    ("module", name)                           trt.ActivationType, trt.float32, trt.Builder
    ("enum", enum, member)                     trt.ActivationType.RELU, trt.ILogger.Severity.ERROR
    ("get" | "set", class, attribute)          layer.alpha = 1.0, tensor.shape, trt.ILogger.ERROR
    ("call", class, method, n_positional, kw)  net.add_activation(x, type=...), trt.Builder(logger)
    ("buffer", class)                          memoryview(serialized_engine)

Instance proxies report the real class (`__class__`), and class proxies answer isinstance and
can be subclassed (`class Logger(trt.ILogger)`), so the pipeline's code runs unchanged. Value
types (Dims, Permutation, enum members, numbers, strings) pass through unwrapped. Only the
first use of each record is located (pytest test id and the calling line), so recording costs
a set lookup per access.
"""

import contextlib
import os
import sys
import types
import weakref

import torch_trt.targets

from .manifest import BUFFERS

_HERE = os.path.abspath(__file__)
_NAMING_PROXY = os.path.join("torch_trt", "conversion", "context.py")  # its `add` forwards converters' add_* calls
_PLAIN = (int, float, str, bool, bytes, type(None))


class Recorder:
    """The set of API uses seen, each with where it was first seen."""

    def __init__(self):
        self.records = {}
        self.checked = False  # set once the records were checked against the manifest
        self._objects = weakref.WeakValueDictionary()  # id(target) -> proxy: the same object gets the same proxy
        self._modules = {}

    def record(self, *key):
        if key not in self.records:
            self.records[key] = (os.environ.get("PYTEST_CURRENT_TEST", "").split(" (")[0], _caller())

    # -- wrapping ------------------------------------------------------------------------------------------------

    def module(self, module):
        proxy = self._modules.get(id(module))
        if proxy is None:
            proxy = self._modules[id(module)] = ModuleProxy(module, self)
        return proxy

    def wrap(self, value, package):
        """`value` as the pipeline should see it: objects of the API package behind proxies, values as they are."""
        if type(value) in _PLAIN:
            return value
        if type(value) in (list, tuple):
            items = [self.wrap(v, package) for v in value]
            return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
        module = getattr(value, "__module__", None) if isinstance(value, type) else type(value).__module__
        if not isinstance(module, str) or not module.startswith(package):
            return value
        if isinstance(value, type):
            return ClassProxy(value, self, value.__name__ if hasattr(value, "__members__") else None, package)
        if hasattr(type(value), "__members__") or isinstance(value, tuple):
            return value  # enum members, Dims and Permutation are values
        if isinstance(value, types.FunctionType):
            return FunctionProxy(value, self, package)
        if _exports_buffer(value):
            return BufferProxy(value, self, package)
        proxy = self._objects.get(id(value))
        if proxy is None or object.__getattribute__(proxy, "_p_target") is not value:
            proxy = ObjectProxy(value, self, package)
            self._objects[id(value)] = proxy
        return proxy


def _exports_buffer(value):
    """Whether `value` exports its bytes (the buffer protocol)."""
    try:
        memoryview(value)
    except TypeError:
        return False
    return True


class BufferProxy(bytearray):
    """An API object that exports a buffer (IHostMemory): a copy of its bytes, since Python classes cannot export a
    buffer of their own before 3.12, whose other attributes are read through an ObjectProxy. Receiving it records
    the buffer's use: the pipeline takes one only to read its bytes."""

    def __init__(self, target, recorder, package):
        recorder.record("buffer", type(target).__name__)
        super().__init__(bytes(target))
        self._p_object = ObjectProxy(target, recorder, package)

    def __getattr__(self, name):
        return getattr(self._p_object, name)


def unwrap(value):
    """The target object behind a proxy; containers are unwrapped element by element."""
    if isinstance(value, (ObjectProxy, ClassProxy, FunctionProxy, ModuleProxy)):
        return object.__getattribute__(value, "_p_target")
    if type(value) in (list, tuple):
        return type(value)(unwrap(v) for v in value)
    if type(value) is dict:
        return {k: unwrap(v) for k, v in value.items()}
    return value


def _caller():
    """file:line of the first frame outside the recorder and the conversion context's naming proxy."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename == _HERE or (
            frame.f_code.co_name == "add" and frame.f_code.co_filename.endswith(_NAMING_PROXY))):
        frame = frame.f_back
    if frame is None:
        return "?"
    filename = frame.f_code.co_filename
    try:
        filename = os.path.relpath(filename)
    except ValueError:
        pass
    return f"{filename}:{frame.f_lineno}"


def _call(recorder, package, owner, name, function, args, kwargs):
    recorder.record("call", owner, name, len(args), tuple(sorted(kwargs)))
    result = function(*unwrap(args), **unwrap(kwargs))
    return recorder.wrap(result, package)


class ModuleProxy:
    """The API module: records each name taken from it."""

    __slots__ = ("_p_target", "_p_recorder", "_p_package")

    def __init__(self, module, recorder):
        object.__setattr__(self, "_p_target", module)
        object.__setattr__(self, "_p_recorder", recorder)
        object.__setattr__(self, "_p_package", module.__name__)

    def __getattr__(self, name):
        module = object.__getattribute__(self, "_p_target")
        value = getattr(module, name)
        recorder = object.__getattribute__(self, "_p_recorder")
        if not (name.startswith("__") and name.endswith("__")):
            recorder.record("module", name)
        if isinstance(value, types.FunctionType):  # the module's own functions (volume, nptype), wherever defined
            return FunctionProxy(value, recorder, module.__name__)
        return recorder.wrap(value, module.__name__)

    def __setattr__(self, name, value):
        raise AttributeError(f"the recorded API module is read-only (setting {name!r})")

    def __repr__(self):
        return f"<recorded {object.__getattribute__(self, '_p_target')!r}>"


class FunctionProxy:
    """A module-level function (volume, nptype): records its calls."""

    __slots__ = ("_p_target", "_p_recorder", "_p_package")

    def __init__(self, function, recorder, package):
        object.__setattr__(self, "_p_target", function)
        object.__setattr__(self, "_p_recorder", recorder)
        object.__setattr__(self, "_p_package", package)

    def __call__(self, *args, **kwargs):
        get = object.__getattribute__
        function = get(self, "_p_target")
        return _call(get(self, "_p_recorder"), get(self, "_p_package"), "<module>", function.__name__, function,
                     args, kwargs)


class ClassProxy:
    """A class or enum of the API: records construction, class attributes and enum members; can be subclassed."""

    __slots__ = ("_p_target", "_p_recorder", "_p_enum", "_p_package", "__weakref__")

    def __init__(self, cls, recorder, enum, package):
        object.__setattr__(self, "_p_target", cls)
        object.__setattr__(self, "_p_recorder", recorder)
        object.__setattr__(self, "_p_enum", enum)
        object.__setattr__(self, "_p_package", package)

    def __getattribute__(self, name):
        if name == "__init__":  # `trt.ILogger.__init__(self)`, not the proxy's own __init__
            get = object.__getattribute__
            return _UnboundInit(get(self, "_p_target"), get(self, "_p_recorder"), get(self, "_p_package"))
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        get = object.__getattribute__
        cls, recorder, enum, package = (get(self, n) for n in ("_p_target", "_p_recorder", "_p_enum", "_p_package"))
        value = getattr(cls, name)
        if name.startswith("__") and name.endswith("__"):
            return value
        if enum is not None:
            recorder.record("enum", enum, name)
            return value
        if isinstance(value, type) and hasattr(value, "__members__"):
            recorder.record("get", cls.__name__, name)
            return ClassProxy(value, recorder, f"{cls.__name__}.{name}", package)
        recorder.record("get", cls.__name__, name)
        return recorder.wrap(value, package)

    def __setattr__(self, name, value):
        raise AttributeError(f"setting {name!r} on an API class is not part of TensorRT's API")

    def __call__(self, *args, **kwargs):
        get = object.__getattribute__
        cls, enum = get(self, "_p_target"), get(self, "_p_enum")
        return _call(get(self, "_p_recorder"), get(self, "_p_package"), enum or cls.__name__, "__init__", cls,
                     args, kwargs)

    def __mro_entries__(self, bases):
        return (object.__getattribute__(self, "_p_target"),)

    def __instancecheck__(self, instance):
        return isinstance(instance, object.__getattribute__(self, "_p_target"))

    def __subclasscheck__(self, subclass):
        return issubclass(unwrap(subclass), object.__getattribute__(self, "_p_target"))

    def __eq__(self, other):
        return object.__getattribute__(self, "_p_target") is unwrap(other)

    def __hash__(self):
        return hash(object.__getattribute__(self, "_p_target"))

    def __repr__(self):
        return repr(object.__getattribute__(self, "_p_target"))


class _UnboundInit:
    """`trt.ILogger.__init__(self)` in a subclass: recorded as a constructor call without `self`."""

    __slots__ = ("cls", "recorder", "package")

    def __init__(self, cls, recorder, package):
        self.cls, self.recorder, self.package = cls, recorder, package

    def __call__(self, instance, *args, **kwargs):
        self.recorder.record("call", self.cls.__name__, "__init__", len(args), tuple(sorted(kwargs)))
        return self.cls.__init__(instance, *unwrap(args), **unwrap(kwargs))


class _Method:
    __slots__ = ("recorder", "package", "owner", "name", "function")

    def __init__(self, recorder, package, owner, name, function):
        self.recorder, self.package, self.owner, self.name, self.function = recorder, package, owner, name, function

    def __call__(self, *args, **kwargs):
        return _call(self.recorder, self.package, self.owner, self.name, self.function, args, kwargs)


class ObjectProxy:
    """An instance of an API class: records attribute reads and writes, method calls and protocol use."""

    __slots__ = ("_p_target", "_p_recorder", "_p_package", "__weakref__")

    def __init__(self, target, recorder, package):
        object.__setattr__(self, "_p_target", target)
        object.__setattr__(self, "_p_recorder", recorder)
        object.__setattr__(self, "_p_package", package)

    @property
    def __class__(self):
        return type(object.__getattribute__(self, "_p_target"))

    def __getattr__(self, name):
        get = object.__getattribute__
        target, recorder, package = get(self, "_p_target"), get(self, "_p_recorder"), get(self, "_p_package")
        owner = type(target).__name__
        if name.startswith("__") and name.endswith("__"):
            return getattr(target, name)
        value = getattr(target, name)  # a missing name raises here, unrecorded: only successful uses are checked
        if callable(value) and getattr(value, "__self__", None) is target:
            return _Method(recorder, package, owner, name, value)
        recorder.record("get", owner, name)
        return recorder.wrap(value, package)

    def __setattr__(self, name, value):
        target = object.__getattribute__(self, "_p_target")
        object.__getattribute__(self, "_p_recorder").record("set", type(target).__name__, name)
        setattr(target, name, unwrap(value))

    def _p_special(self, name):
        target = object.__getattribute__(self, "_p_target")
        object.__getattribute__(self, "_p_recorder").record("call", type(target).__name__, name, 0 if name in (
            "__len__", "__bool__", "__iter__") else 1, ())
        return target

    def __len__(self):
        return len(ObjectProxy._p_special(self, "__len__"))

    def __getitem__(self, index):
        target = ObjectProxy._p_special(self, "__getitem__")
        return object.__getattribute__(self, "_p_recorder").wrap(target[unwrap(index)],
                                                                 object.__getattribute__(self, "_p_package"))

    def __iter__(self):
        target = object.__getattribute__(self, "_p_target")
        ObjectProxy._p_special(self, "__iter__" if hasattr(type(target), "__iter__") else "__getitem__")
        package, recorder = object.__getattribute__(self, "_p_package"), object.__getattribute__(self, "_p_recorder")
        return (recorder.wrap(item, package) for item in target)

    def __bool__(self):
        target = object.__getattribute__(self, "_p_target")
        if hasattr(type(target), "__bool__"):
            ObjectProxy._p_special(self, "__bool__")
        elif hasattr(type(target), "__len__"):
            ObjectProxy._p_special(self, "__len__")
        return bool(target)

    def __eq__(self, other):
        return object.__getattribute__(self, "_p_target") == unwrap(other)

    def __hash__(self):
        return hash(object.__getattribute__(self, "_p_target"))

    def __repr__(self):
        return repr(object.__getattribute__(self, "_p_target"))


# -- installation -----------------------------------------------------------------------------------------------

_ACTIVE = []  # stack of recorders; the innermost records


def _recording_resolve(original):
    def resolve_target(name, device=None):
        module = original(name, device)
        return _ACTIVE[-1].module(module) if _ACTIVE else module

    resolve_target.cache_clear = original.cache_clear
    resolve_target.__wrapped__ = original
    resolve_target.__doc__ = original.__doc__
    return resolve_target


def install():
    """Wrap resolve_target in every loaded torch_trt module that imported it; return an uninstall function."""
    import torch_trt  # noqa: F401  (load the modules that bind resolve_target)
    import torch_trt.backend.pipeline  # noqa: F401
    import torch_trt.runtime.engine_manager  # noqa: F401

    original = torch_trt.targets.resolve_target
    wrapper = _recording_resolve(original)
    patched = [module for module in list(sys.modules.values())
               if getattr(module, "__name__", "").startswith("torch_trt.") and module is not torch_trt.targets
               and getattr(module, "resolve_target", None) is original]
    for module in patched:
        setattr(module, "resolve_target", wrapper)

    def uninstall():
        for module in patched:
            setattr(module, "resolve_target", original)

    return uninstall


@contextlib.contextmanager
def recording(recorder=None):
    """Record into `recorder` (a fresh one by default) inside the block; yields it."""
    recorder = recorder or Recorder()
    _ACTIVE.append(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.remove(recorder)


def violations(recorder, manifest):
    """[(message, test id, location)] for every recorded use TensorRT's bindings would not accept."""
    found = []
    for key, (test, location) in sorted(recorder.records.items(), key=lambda item: str(item[0])):
        kind = key[0]
        if kind == "module":
            problem = manifest.check_module_name(key[1])
        elif kind == "enum":
            problem = manifest.check_enum_member(key[1], key[2])
        elif kind in ("get", "set"):
            problem = manifest.check_attribute(key[1], key[2], kind)
        elif kind == "call":
            problem = manifest.check_call(*key[1:])
        elif kind == "buffer":
            problem = None if key[1] in BUFFERS else f"{key[1]} does not support the buffer protocol (memoryview(x))"
        else:
            problem = f"unknown record {key}"
        if not problem and kind != "buffer":
            problem = manifest.check_minimum(*key)
        if problem:
            found.append((problem, test, location))
    return found


def report(found, manifest):
    """A readable report: one line per violation with the test and source line that first did it."""
    lines = [f"{len(found)} use(s) of the network API that TensorRT {manifest.version} would not accept:"]
    for problem, test, location in found:
        lines.append(f"  - {problem}\n      at {location} (first in {test or 'no test'})")
    return "\n".join(lines)
