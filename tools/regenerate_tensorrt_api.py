"""Check or regenerate torch_trt/targets/tensorrt_api.json from the public `tensorrt-cu13-bindings` wheel.

    python tools/regenerate_tensorrt_api.py --check            # compare the bindings with the vendored manifest
    python tools/regenerate_tensorrt_api.py -o torch_trt/targets/tensorrt_api.json   # rewrite its introspected part
    python tools/regenerate_tensorrt_api.py --wheel DIR/tensorrt_cu13_bindings-*.whl --check   # no download

1. `pip download` the wheel (CPython 3.12, manylinux x86_64); installing TensorRT is not needed for this.
2. Unzip it and import its pybind11 extension, `tensorrt_bindings.tensorrt`.
3. Read every class (bases, methods with each overload's parameter names and defaults, properties read-only or
   read/write), enum (members in declaration order, values) and module function from the runtime objects.

Step 2 needs what the extension links against: a CPython matching the wheel (3.12) on Linux x86_64 and
TensorRT's libraries (libnvinfer.so.11: `pip install tensorrt-cu13-libs==VERSION --extra-index-url
https://pypi.nvidia.com`; no GPU is needed to import). Without them the script stops after step 1 and says so.
The vendored manifest was made by the steering repository's tools/trt_api_from_bindings.py, which loads the
extension against generated stub libraries instead (it needs a C compiler). Its hand-checked parts (quirks,
doc_mismatches, changed_since_10, unverified, ...) are not derivable by introspection and are kept as they are.
"""

import argparse
import glob
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

MANIFEST = os.path.join(os.path.dirname(__file__), "..", "torch_trt", "targets", "tensorrt_api.json")
INTROSPECTED = ("classes", "enums", "enum_values", "functions", "function_signatures", "module_attributes")


def download(version, directory):
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
               "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "-d", directory,
               f"tensorrt-cu13-bindings=={version}"]
    subprocess.run(command, check=True)
    return glob.glob(os.path.join(directory, "tensorrt_cu13_bindings-*.whl"))[0]


def load(wheel, directory):
    """The bindings' Python package from the unzipped wheel, or exit explaining what the import needs."""
    zipfile.ZipFile(wheel).extractall(directory)
    sys.path.insert(0, directory)
    try:
        return importlib.import_module("tensorrt_bindings")
    except ImportError as error:
        sys.exit(f"cannot import the bindings from {wheel}: {error}\nThey need CPython 3.12 on Linux x86_64 (this "
                 f"is {sys.version.split()[0]}) and TensorRT's libraries: pip install tensorrt-cu13-libs "
                 "--extra-index-url https://pypi.nvidia.com (no GPU needed). The vendored manifest stays as it is.")


def signatures(name, doc):
    """pybind11 docstring -> ['(a: int, b: X = 1) -> R', ...], one per overload, `self` and module prefixes dropped."""
    found = []
    for line in (doc or "").splitlines():
        match = re.match(rf"^(?:\d+\. )?{re.escape(name)}\((.*)$", line.strip())
        if not match or line.strip().startswith(f"{name}(*args, **kwargs)"):
            continue
        depth, text = 1, match.group(1)
        for end, char in enumerate(text):
            depth += (char in "([<{") - (char in ")]>}")
            if depth == 0:
                break
        parameters, returns = text[:end], text[end + 1:].strip()
        parameters = re.sub(r"^self(: [\w.]+)?(, )?", "", parameters)
        found.append(re.sub(r"\btensorrt(_bindings)?\.tensorrt\.", "", f"({parameters}) {returns}".strip()))
    return found


def parameters(signature):
    """'(a: int, b: X = 1) -> R' -> (['a', 'b'], {'b': '1'})."""
    inside = signature[1:signature.rindex(") ->" if ") ->" in signature else ")")]
    depth, parts, current = 0, [], ""
    for char in inside:
        depth += (char in "([<{") - (char in ")]>}")
        if char == "," and depth == 0:
            parts, current = parts + [current], ""
        else:
            current += char
    names, defaults = [], {}
    for part in (p.strip() for p in parts + [current] if p.strip()):
        name = re.split(r"[:=]", part, maxsplit=1)[0].strip()
        names.append(name)
        if " = " in part:
            defaults[name] = part.split(" = ", 1)[1]
    return names, defaults


def introspect(package):
    extension = package.tensorrt
    result = {"classes": {}, "enums": {}, "enum_values": {}, "functions": {}, "function_signatures": {},
              "module_attributes": {}}

    def add_enum(name, cls):
        result["enums"][name] = list(cls.__members__)
        result["enum_values"][name] = {k: int(v) for k, v in cls.__members__.items()}

    for name, obj in sorted(vars(extension).items()):
        if isinstance(obj, type) and hasattr(obj, "__members__"):
            add_enum(name, obj)
        elif isinstance(obj, type):
            result["classes"][name] = describe(name, obj, extension, add_enum)
        elif callable(obj) and not name.startswith("_"):
            sigs = signatures(name, obj.__doc__)
            result["functions"][name] = parameters(sigs[0])[0] if sigs else []
            result["function_signatures"][name] = sigs
    for name, obj in vars(package).items():
        if inspect.isfunction(obj) and not name.startswith("_"):
            result["functions"][name] = list(inspect.signature(obj).parameters)
            result["function_signatures"][name] = [str(inspect.signature(obj))]
        elif type(obj).__name__ == "DataType" and not name.startswith("_"):
            result["module_attributes"][name] = f"DataType.{obj.name}"
    return result


def describe(name, cls, extension, add_enum):
    info = {"bases": [b.__name__ for b in cls.__bases__ if b.__module__ == cls.__module__], "methods": {},
            "attributes": [], "readonly_attributes": [], "signatures": {}, "overloads": {}, "defaults": {}}
    for member, value in vars(cls).items():
        if isinstance(value, property):
            info["attributes"].append(member)
            if value.fset is None:
                info["readonly_attributes"].append(member)
        elif isinstance(value, type) and hasattr(value, "__members__"):
            add_enum(f"{name}.{member}", value)
        elif callable(value) and (not member.startswith("__") or member == "__init__"):
            sigs = signatures(member, getattr(value, "__doc__", ""))
            if not sigs:
                continue
            info["signatures"][member] = sigs
            lists = [parameters(s)[0] for s in sigs]
            if member == "__init__":
                info["constructor"] = lists
                continue
            info["methods"][member] = lists[0]
            if len(lists) > 1:
                info["overloads"][member] = lists
            defaults = {k: v for s in sigs for k, v in parameters(s)[1].items()}
            if defaults:
                info["defaults"][member] = defaults
    return {k: v for k, v in info.items() if v or k in ("bases", "methods", "attributes", "readonly_attributes")}


def differences(old, new):
    """Human-readable differences of the introspected parts (names, parameters, access, enum members/values)."""
    found = []
    for key in ("classes", "enums", "enum_values", "functions"):
        for name in sorted(set(old[key]) | set(new[key])):
            a, b = old[key].get(name), new[key].get(name)
            if key == "classes" and a and b:
                keys = ("bases", "methods", "attributes", "readonly_attributes")
                a, b = ({k: c.get(k) for k in keys} for c in (a, b))
            if a != b:
                found.append(f"{key}.{name}: vendored {json.dumps(a)[:200]} != bindings {json.dumps(b)[:200]}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="11.4.0.106")
    parser.add_argument("--wheel", help="a downloaded tensorrt_cu13_bindings wheel (skips the download)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the bindings differ from the manifest")
    parser.add_argument("-o", "--output", help="write the manifest with its introspected part replaced")
    arguments = parser.parse_args()
    with open(MANIFEST) as file:
        vendored = json.load(file)
    with tempfile.TemporaryDirectory() as directory:
        wheel = arguments.wheel or download(arguments.version, directory)
        fresh = introspect(load(wheel, os.path.join(directory, "unpacked")))
    found = differences(vendored, fresh)
    print("\n".join(found) or f"the bindings match the vendored manifest ({vendored['version']})")
    if arguments.output:
        vendored.update({key: fresh[key] for key in INTROSPECTED}, version=arguments.version)
        with open(arguments.output, "w") as file:
            json.dump(vendored, file, indent=1)
    return 1 if arguments.check and found else 0


if __name__ == "__main__":
    sys.exit(main())
