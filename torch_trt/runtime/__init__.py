"""Runtime: the execute_engine op, the per-process engine cache, and stitching engines into graphs."""

from . import execute_engine  # noqa: F401  (registers torch.ops.torch_trt.execute_engine)
