"""torch.compile under autocast: engines run in the precision they were built for, so a graph that autocast would
change runs in PyTorch, as eager does (a trace lost autocast(enabled=False) regions, and a call under autocast mixed
float32 engines with bfloat16 fallbacks)."""

import torch
from torch import nn
from dynamo_harness import REFERENCE, engine_calls


class FullPrecisionRegion(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        h = self.a(x)
        with torch.autocast("cpu", enabled=False):  # float32 even under an outer autocast
            return self.b(h.float() + 256.0) - self.b(torch.full_like(h, 256.0).float())


class CastsItself(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 16), nn.Linear(16, 8)

    def forward(self, x):
        return self.b(self.a(x).float().half().float() * 2)


def _under_autocast(model, compiled, x):
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        return model(x), compiled(x)


def test_a_graph_called_under_autocast_runs_as_eager_does(builds, caplog):
    """A region with autocast off came out bfloat16-rounded (off by 0.84); casts in forward came back float32."""
    for model in (FullPrecisionRegion().eval(), CastsItself().eval()):
        x = torch.randn(4, 16)
        expected, actual = _under_autocast(model, torch.compile(model, backend="tensorrt", options=REFERENCE), x)
        assert actual.dtype == expected.dtype and torch.equal(actual, expected)
    assert not builds and "called under cpu autocast" in caplog.text


class HalfPrecisionRegion(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.a(x) * 2


def test_a_graph_turning_autocast_on_runs_in_pytorch(builds, caplog):
    model, x = HalfPrecisionRegion().eval(), torch.randn(4, 16)
    compiled = torch.compile(model, backend="tensorrt", options=REFERENCE)
    with torch.no_grad():
        actual, expected = compiled(x), model(x)
    assert actual.dtype == expected.dtype == torch.bfloat16 and torch.equal(actual, expected)
    assert not builds and "it turns autocast on" in caplog.text


def test_a_region_turning_autocast_off_outside_autocast_compiles(builds):
    """A no-op there: transformers' models keep rotary embeddings in float32 so, and must keep their engines."""
    model, x = FullPrecisionRegion().eval(), torch.randn(4, 16)
    compiled = torch.compile(model, backend="tensorrt", options=REFERENCE)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=1e-4)  # b(h + 256) - b(256) cancels
    assert engine_calls(builds) == 1


def test_a_graph_compiled_outside_autocast_is_compiled_again_under_it(builds):
    model, x = CastsItself().eval(), torch.randn(4, 16)
    compiled = torch.compile(model, backend="tensorrt", options=REFERENCE)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    engine_count = len(builds)
    assert engine_count == 1
    expected, actual = _under_autocast(model, compiled, x)
    assert actual.dtype == expected.dtype == torch.bfloat16 and torch.equal(actual, expected)
    assert len(builds) == engine_count  # the autocast call's graph built nothing
