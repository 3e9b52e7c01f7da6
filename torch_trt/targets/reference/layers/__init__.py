"""Layer kinds of the reference network, one module per kind; importing registers their add_* methods."""

from ..network import ILayer
from . import activation, cast, constant, elementwise, shuffle, unary  # noqa: F401  (registration)


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


LAYER_CLASSES = {cls.__name__: cls for cls in _all_subclasses(ILayer)}
