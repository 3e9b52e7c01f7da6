"""Questions about TensorRT's real Python API, answered from the vendored bindings manifest.

`Manifest.check_*` return None when a use is valid on TensorRT 11.4, else a message saying why
not. Members are looked up on the class, then its bases (ILayer for layer classes), so a layer's
own attribute shadows the base's (IActivationLayer.type is the ActivationType and writable,
ILayer.type the read-only LayerType). Calls are matched against every overload's parameters:
no extra positionals, only real keyword names, pybind11 placeholders (arg0, ...) positional only,
every parameter without a default supplied.
"""

import re

from torch_trt.targets.tensorrt import MINIMUM_VERSION, api_manifest

# Module attributes every Python package has, which the manifest's introspection of the bindings does not list.
MODULE_EXTRAS = {"__version__", "__name__", "__file__", "__doc__", "__path__", "__spec__", "__loader__",
                 "__package__", "__dict__"}
# Pure-Python additions of tensorrt/__init__.py the introspection does not list: (owner, name).
PYTHON_EXTRAS = {("DataType", "itemsize")}
# Classes that support the buffer protocol (bytes(x), memoryview(x)).
BUFFERS = {"IHostMemory"}
# Methods whose keyword names are bound swapped relative to their meaning (manifest quirks): positional only.
SWAPPED_KEYWORDS = {("ICudaEngine", "get_tensor_profile_values")}
_PLACEHOLDER = re.compile(r"arg\d+$")


def split_parameters(signature):
    """'(a: int, b: Dims = (1, 2)) -> X' -> [('a', False), ('b', True)]; commas inside brackets don't split."""
    inside = _top_level(signature.strip())
    parameters = []
    for part in (p.strip() for p in _split(inside)):
        if not part or part in ("*", "/") or part.startswith("*"):
            continue
        name = re.split(r"[:=]", part, maxsplit=1)[0].strip()
        parameters.append((name, _has_default(part)))
    return parameters


def _top_level(text):
    """The text inside the first bracket pair of `text`."""
    depth = 0
    for index, char in enumerate(text):
        depth += (char in "([<{") - (char in ")]>}")
        if depth == 0:
            return text[1:index]
    return text[1:]


def _split(text):
    depth, parts, current = 0, [], ""
    for char in text:
        depth += (char in "([<{") - (char in ")]>}")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def _has_default(part):
    depth = 0
    for char in part:
        depth += (char in "([<{") - (char in ")]>}")
        if char == "=" and depth == 0:
            return True
    return False


class Manifest:
    """The bindings manifest (torch_trt/targets/tensorrt_api.json) with lookups for the conformance checks."""

    def __init__(self, data=None):
        data = data or api_manifest()
        self.version = data["version"]
        self.classes, self.enums, self.enum_values = data["classes"], data["enums"], data["enum_values"]
        self.functions, self.function_signatures = data["functions"], data["function_signatures"]
        self.module_attributes = data["module_attributes"]
        self.enum_aliases = data.get("enum_aliases", {})
        self.minimum = ".".join(map(str, MINIMUM_VERSION))
        self.added = _added_after_minimum(data)

    # -- lookups -------------------------------------------------------------------------------------------------

    def enum_name(self, name):
        """The manifest's name of an enum ('Logger.Severity' -> 'ILogger.Severity'), or None."""
        name = self.enum_aliases.get(name, name)
        return name if name in self.enums else None

    def chain(self, owner):
        """`owner` and its bases, nearest first."""
        order, pending = [], [owner]
        while pending:
            name = pending.pop(0)
            if name in self.classes and name not in order:
                order.append(name)
                pending.extend(self.classes[name].get("bases", []))
        return order

    def member(self, owner, name):
        """(kind, defining class) of `owner.name` (attribute, method, class_attribute or enum), or None."""
        if (owner, name) in PYTHON_EXTRAS:
            return "attribute", owner
        for cls in self.chain(owner):
            info = self.classes[cls]
            if name in info.get("attributes", ()):
                return "attribute", cls
            if any(name in info.get(key, ()) for key in ("methods", "special_methods", "python_methods",
                                                         "static_methods")):
                return "method", cls
            if name in info.get("class_attributes", {}):
                return "class_attribute", cls
            if f"{cls}.{name}" in self.enums:
                return "enum", cls
        return None

    def overloads(self, owner, method):
        """Each overload's [(parameter, has_default)], or None when `owner.method` does not exist."""
        if owner == "<module>":
            if method not in self.functions:
                return None
            return [split_parameters(s) for s in self.function_signatures.get(method, [])] or [
                [(n, False) for n in self.functions[method]]]
        if self.enum_name(owner):
            return [[("value", False)]] if method == "__init__" else None
        for cls in self.chain(owner):
            info = self.classes[cls]
            if method == "__init__":
                if "constructor" not in info and "__init__" not in info.get("signatures", {}):
                    continue
                signatures = info.get("signatures", {}).get("__init__")
                return ([split_parameters(s) for s in signatures] if signatures
                        else [[(n, False) for n in ctor] for ctor in info["constructor"]])
            if method in info.get("special_methods", {}):
                return [split_parameters(s) for s in info["special_methods"][method]]
            if method in info.get("python_methods", {}):
                return [[(n, False) for n, _ in split_parameters(info["python_methods"][method])][1:]]
            if method in info.get("static_methods", {}):
                return [[(n, False) for n in names] for names in info["static_methods"][method]]
            if method in info.get("methods", {}):
                signatures = info.get("signatures", {}).get(method)
                if signatures:
                    return [split_parameters(s) for s in signatures]
                defaults = info.get("defaults", {}).get(method, {})
                lists = info.get("overloads", {}).get(method) or [info["methods"][method]]
                return [[(n, n in defaults) for n in names] for names in lists]
        return None

    def _positional_only(self, owner, method):
        return any(method in self.classes[cls].get("positional_only", ()) for cls in self.chain(owner))

    # -- checks --------------------------------------------------------------------------------------------------

    def _too_new(self, what, baseline):
        return (f"{what} was added after TensorRT {baseline}, but torch_trt supports TensorRT {self.minimum} and up "
                "(MINIMUM_VERSION in torch_trt/targets/tensorrt.py)")

    def _added_member(self, owner, name, key):
        """Why `owner.name` (its defining class's member under `key` of changed_since_10) is too new, or None."""
        found = self.member(owner, name)
        cls = found[1] if found else owner
        baseline = self.added[key].get((cls, name)) or self.added["classes"].get(cls)
        return self._too_new(f"{cls}.{name}", baseline) if baseline else None

    def check_module_name(self, name):
        known = (name in self.classes or name in self.enums or name in self.functions
                 or name in self.module_attributes or name in MODULE_EXTRAS)
        return None if known else f"tensorrt.{name} does not exist in TensorRT {self.version}"

    def check_enum_member(self, enum, member):
        name = self.enum_name(enum)
        if name is None:
            return f"enum {enum} does not exist in TensorRT {self.version}"
        if member.startswith("__") or member in ("name", "value"):
            return None
        if member not in self.enums[name]:
            members = ", ".join(self.enums[name])
            return f"{name}.{member} is not a member in TensorRT {self.version} (members: {members})"
        return None

    def check_attribute(self, owner, name, mode):
        """mode 'get' or 'set' of `owner.name` (owner a class name)."""
        if owner not in self.classes:
            return f"class {owner} does not exist in TensorRT {self.version}"
        found = self.member(owner, name)
        if found is None:
            return f"{owner}.{name} does not exist in TensorRT {self.version}"
        kind, cls = found
        info = self.classes.get(cls, {})
        if mode == "set":
            if kind != "attribute":
                return f"{owner}.{name} is a {kind.replace('_', ' ')}, not a writable attribute"
            if name in info.get("readonly_attributes", ()):
                return f"{owner}.{name} is read-only in TensorRT {self.version} (defined on {cls})"
        elif name in info.get("writeonly_attributes", ()):
            return f"{owner}.{name} is write-only in TensorRT {self.version}"
        return None

    def check_call(self, owner, method, positional, keywords):
        """A call of `owner.method` (owner a class name or '<module>') with `positional` args and `keywords` names."""
        overloads = self.overloads(owner, method)
        where = method if owner == "<module>" else f"{owner}.{method}"
        if overloads is None:
            if owner != "<module>" and owner not in self.classes and not self.enum_name(owner):
                return f"class {owner} does not exist in TensorRT {self.version}"
            return f"{where} does not exist in TensorRT {self.version}"
        if keywords and (owner, method) in SWAPPED_KEYWORDS:
            return f"{where}: its keyword names are swapped relative to their meaning; pass the arguments positionally"
        positional_only = self._positional_only(owner, method)
        problems = []
        for parameters in overloads:
            problem = _match(parameters, positional, keywords, positional_only)
            if problem is None:
                return None
            problems.append(f"({', '.join(n for n, _ in parameters)}): {problem}")
        used = ", ".join(["_"] * positional + [f"{k}=" for k in keywords])
        return f"{where}({used}) matches no signature of TensorRT {self.version}: " + "; ".join(problems)

    def check_minimum(self, kind, *key):
        """Why a use (a recorder key, valid on this version) needs TensorRT newer than the minimum, or None."""
        if kind == "module":
            baseline = self.added["classes"].get(key[0]) or self.added["functions"].get(key[0])
            return self._too_new(f"tensorrt.{key[0]}", baseline) if baseline else None
        if kind == "enum":
            name = self.enum_name(key[0]) or key[0]
            baseline = self.added["classes"].get(name) or self.added["enum_members_added"].get((name, key[1]))
            return self._too_new(f"{name}.{key[1]}", baseline) if baseline else None
        if kind in ("get", "set"):
            found = self.member(*key)
            return self._added_member(*key, "attributes_added" if found and found[0] == "attribute"
                                      else "methods_added")
        if kind == "call":
            return self._too_new_call(*key, self._positional_only(*key[:2]) if key[0] != "<module>" else False)
        return None

    def _too_new_call(self, owner, method, positional, keywords, positional_only):
        """Why a call valid on this version uses a method or an overload added after the minimum, or None."""
        if owner == "<module>":
            baseline = self.added["functions"].get(method)
            return self._too_new(method, baseline) if baseline else None
        if method != "__init__":
            problem = self._added_member(owner, method, "methods_added")
            if problem:
                return problem
        found = self.member(owner, method)
        baseline, changed = self.added["signatures"].get(f"{found[1] if found else owner}.{method}", (None, None))
        if changed is None:
            return None
        old = [split_parameters(s) if isinstance(s, str) else [(n, False) for n in s] for s in changed["old"]]
        if any(_match(p, positional, keywords, positional_only) is None for p in old):
            return None
        used = ", ".join(["_"] * positional + [f"{k}=" for k in keywords])
        return self._too_new(f"this form of {owner}.{method}({used})", baseline)


def _added_after_minimum(data):
    """What changed_since_10 lists as added after each baseline (all at or after the minimum): name -> baseline.

    A name listed by several baselines keeps the latest, the one it is certainly missing from."""
    added = {"classes": {}, "functions": {}, "methods_added": {}, "attributes_added": {}, "enum_members_added": {},
             "signatures": {}}
    for baseline, changes in sorted(data["changed_since_10"].items(), key=lambda item: _version(item[0])):
        assert _version(baseline) >= MINIMUM_VERSION, f"the manifest's baseline {baseline} predates the minimum"
        for name in changes["classes_added"] + changes["enums_added"]:
            added["classes"][name] = baseline
        for name in changes["functions_added"]:
            added["functions"][name] = baseline
        for key in ("methods_added", "attributes_added", "enum_members_added"):
            for owner, names in changes[key].items():
                added[key].update({(owner, name): baseline for name in names})
        for name, change in changes["signature_changed"].items():
            added["signatures"][name] = (baseline, change)
    return added


def _version(text):
    return tuple(int(part) for part in text.split(".")[:2])


def _match(parameters, positional, keywords, positional_only):
    names = [n for n, _ in parameters]
    if positional > len(parameters):
        return f"{positional} positional arguments, at most {len(parameters)}"
    for keyword in keywords:
        if keyword not in names:
            return f"no parameter named {keyword!r}"
        if names.index(keyword) < positional:
            return f"{keyword!r} given positionally and by keyword"
        if positional_only or _PLACEHOLDER.match(keyword):
            return f"{keyword!r} is positional-only (pybind11 placeholder name)"
    missing = [n for i, (n, default) in enumerate(parameters) if i >= positional and not default and n not in keywords]
    return f"missing {', '.join(missing)}" if missing else None
