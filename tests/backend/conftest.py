"""Fixtures for the dynamo front door: a fresh dynamo and engine cache per test, and a build counter."""

import pytest

from torch_trt.backend import dynamo


@pytest.fixture(autouse=True)
def every_test_starts_fresh(fresh_dynamo):
    """A fresh dynamo and engine cache for each test here (tests/conftest.py)."""


@pytest.fixture
def builds(monkeypatch):
    """The (input specs, compiled module) of every pipeline run the dynamo backend makes."""
    runs = []

    def spy(module, specs, settings, device):
        compiled = compile_frozen(module, specs, settings, device)
        runs.append((specs, compiled))
        return compiled

    compile_frozen = dynamo.compile_frozen
    monkeypatch.setattr(dynamo, "compile_frozen", spy)
    return runs

