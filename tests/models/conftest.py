"""Fixtures for the model zoo: a fresh dynamo per test and the modules the dynamo backend compiles."""

import pytest

from torch_trt.backend import dynamo


@pytest.fixture(autouse=True)
def every_test_starts_fresh(fresh_dynamo):
    """A fresh dynamo and engine cache for each test here (tests/conftest.py)."""


@pytest.fixture
def dynamo_modules(monkeypatch):
    """The compiled TorchScript modules of every pipeline run the dynamo backend makes, in order."""
    modules = []
    compile_frozen = dynamo.compile_frozen

    def spy(*args, **kwargs):
        modules.append(compile_frozen(*args, **kwargs))
        return modules[-1]

    monkeypatch.setattr(dynamo, "compile_frozen", spy)
    return modules
