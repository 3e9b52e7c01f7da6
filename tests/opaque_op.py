"""`torch.ops.torch_trt_test.opaque`: cumsum under a name no converter will ever take, for the tests that need an op
which must run in PyTorch (partitioning, fallback reports). Imported by tests/conftest.py, so it exists before any
test scripts a module that calls it."""

import torch

_library = torch.library.Library("torch_trt_test", "DEF")
_library.define("opaque(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
_library.impl("opaque", lambda self, dim, dtype=None: torch.cumsum(self, dim, dtype=dtype), "CompositeExplicitAutograd")
