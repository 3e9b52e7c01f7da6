"""The model zoo: small transformers models through both front doors, compared with eager fp32.

Each model (tests/models/zoo.py) compiles with no error, matches eager within 1e-4 relative, and runs
at least one engine; nodes may fall back to PyTorch. The share of nodes in engines is printed
(`pytest -s` shows it).
"""

import pytest
import torch

import torch_trt
from zoo import ZOO, build

RTOL = 1e-4
ENGINE = "torch_trt::execute_engine"
# transformers' shape checks (`if height != self.image_size[0]`) are Python `if`s on traced sizes;
# the examples have the shapes every call will have, so the traced branch is the right one.
TORCHSCRIPT = {"target": "reference", "allow_traced_control_flow": True}
DYNAMO = {"target": "reference", "pass_through_build_failures": True}


def _assert_close(actual, expected):
    scale = expected.abs().max()
    torch.testing.assert_close(actual, expected, rtol=RTOL, atol=RTOL * scale)


def _engine_share(report):
    counts = {kind: sum(s.node_count for s in report.segments if s.kind == kind) for kind in ("engine", "torch")}
    return counts["engine"], counts["engine"] + counts["torch"]


@pytest.mark.parametrize("name", ZOO)
def test_torch_trt_compile(name):
    model, inputs = build(name)
    with torch.no_grad():
        expected = model(*inputs)
        compiled = torch_trt.compile(model, inputs=inputs, **TORCHSCRIPT)
        actual = compiled(*inputs)
    _assert_close(actual, expected)
    assert ENGINE in str(compiled.graph), f"{name}: no engine in the compiled graph"
    in_engines, total = _engine_share(torch_trt.explain(model, inputs=inputs, **TORCHSCRIPT))
    print(f"{name}: {in_engines}/{total} nodes ({in_engines / total:.0%}) in "
          f"{str(compiled.graph).count(ENGINE)} engine(s)")


@pytest.mark.parametrize("name", ZOO)
def test_torch_compile(name, dynamo_modules):
    model, inputs = build(name)
    compiled = torch.compile(model, backend="tensorrt", options=DYNAMO)
    with torch.no_grad():
        expected = model(*inputs)
        actual = compiled(*inputs)
    _assert_close(actual, expected)
    engines = sum(str(module.graph).count(ENGINE) for module in dynamo_modules)
    assert engines >= 1, f"{name}: dynamo's graphs ran no engine"
    print(f"{name}: {engines} engine(s) in {len(dynamo_modules)} compiled graph(s)")


@pytest.mark.parametrize("name", list(ZOO))
def test_every_node_converts(name):
    """Each zoo model is one engine on the TorchScript path (BERT was not while shape inference carried an expanded
    constant's values at the wrong size): a fallback is a converter, lowering or reference regression."""
    model, inputs = build(name)
    report = torch_trt.explain(model, inputs, **TORCHSCRIPT)
    assert report.engine_count == 1 and not report.fallbacks, report
