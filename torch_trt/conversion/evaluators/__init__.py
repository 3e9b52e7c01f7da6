"""Compile-time evaluators, mirroring the converter layout: prim ops and aten ops on static values."""

from . import aten, device, prim  # noqa: F401  (registration)
