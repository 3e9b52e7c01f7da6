"""Op converters, one module per op family; importing a family registers its converters."""

from . import activation  # noqa: F401
from . import elementwise  # noqa: F401
from . import unary  # noqa: F401
