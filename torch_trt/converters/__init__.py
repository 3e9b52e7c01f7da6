"""Op converters, one module per op family, found by file name; importing a family registers its converters."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):  # _helpers.py and _math.py hold no converters
        importlib.import_module(f"{__name__}.{_module.name}")
