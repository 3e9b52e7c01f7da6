"""What the runs of a module's forward that compiling makes (a trace, the eager checks) write into the module, to see
it and undo it: a call counter or a value cached on the first call in a plain Python attribute, a buffer written in
place or set anew.
"""

import contextlib

import torch


def attributes(module):
    """{(submodule name, attribute): value} of the module's and its submodules' plain Python attributes (not their
    parameters, buffers or submodules)."""
    return {(name, key): value for name, submodule in module.named_modules() for key, value in vars(submodule).items()
            if not key.startswith("_")}


def changed(before, after):
    """The keys of the attributes set to another value, or added, from `before` to `after` (two `attributes`)."""
    return [key for key, value in after.items() if key not in before or not _same(before[key], value)]


def name(key):
    """`self.<submodule>.<attribute>` of an `attributes` key."""
    submodule, attribute = key
    return f"self.{submodule + '.' if submodule else ''}{attribute}"


@contextlib.contextmanager
def left_as_it_was(module):
    """Put back, on leaving, the attributes and buffers that the block's runs of forward set or wrote in place; gives
    the attributes as they were (an `attributes`)."""
    before = attributes(module)
    buffers = {submodule: dict(submodule._buffers) for submodule in module.modules()}
    values = {buffer: (buffer._version, buffer.clone()) for held in buffers.values() for buffer in held.values()
              if buffer is not None and not buffer.is_inference()}  # which no forward outside inference mode writes
    try:
        yield before
    finally:
        _restore_attributes(module, before)
        for submodule, held in buffers.items():
            submodule._buffers.clear()
            submodule._buffers.update(held)
        with torch.no_grad():
            for buffer, (version, value) in values.items():
                if buffer._version != version:
                    buffer.copy_(value)


def _restore_attributes(module, before):
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
