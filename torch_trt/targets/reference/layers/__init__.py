"""Layer kinds of the reference network, one module per kind, found by file name.

Importing a layer module registers its `add_*` methods on INetworkDefinition; LAYER_CLASSES maps
each ILayer subclass's name to the class, for restoring serialized engines.
"""

import importlib
import pkgutil

from ..network import ILayer

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


LAYER_CLASSES = {cls.__name__: cls for cls in _all_subclasses(ILayer)}
