"""Shared fixtures: the devices every accuracy test runs on (CPU always, CUDA when present)."""

import pytest
import torch

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
