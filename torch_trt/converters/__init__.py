"""Op converters, one module per op family; importing a family registers its converters."""

from . import activation  # noqa: F401
from . import concat  # noqa: F401
from . import conv  # noqa: F401
from . import elementwise  # noqa: F401
from . import matmul  # noqa: F401
from . import normalization  # noqa: F401
from . import pooling  # noqa: F401
from . import reduce  # noqa: F401
from . import select  # noqa: F401
from . import shape  # noqa: F401
from . import softmax  # noqa: F401
from . import unary  # noqa: F401
