"""A module's plain Python attributes (not its parameters, buffers or submodules), to see and undo what the runs of
its forward that compiling makes (a trace, the eager checks) write: a call counter, a value cached on the first call.
"""


def attributes(module):
    """{(submodule name, attribute): value} of the module and its submodules."""
    return {(name, key): value for name, submodule in module.named_modules() for key, value in vars(submodule).items()
            if not key.startswith("_")}


def changed(before, after):
    """The keys of the attributes set to another value, or added, from `before` to `after` (two `attributes`)."""
    return [key for key, value in after.items() if key not in before or not _same(before[key], value)]


def name(key):
    """`self.<submodule>.<attribute>` of an `attributes` key."""
    submodule, attribute = key
    return f"self.{submodule + '.' if submodule else ''}{attribute}"


def restore(module, before):
    """Put back the attributes `before` holds and drop those added since."""
    submodules = dict(module.named_modules())
    for submodule, attribute in set(attributes(module)) - set(before):
        delattr(submodules[submodule], attribute)
    for (submodule, attribute), value in before.items():
        if not _same(getattr(submodules[submodule], attribute, None), value):
            setattr(submodules[submodule], attribute, value)


def _same(old, new):
    """Whether an attribute kept its value: the same object, or an equal number or string."""
    return old is new or (isinstance(old, (int, float, str, bool)) and type(old) is type(new) and old == new)
