"""int8 and uint8 tensors cross engine boundaries as int32 (torch_trt/partitioning/boundary.py) and match eager exactly.

Each row is a program, its inputs (drawn over the whole int8 or uint8 range, so int8 arithmetic overflows and
wraps in eager), the segments explain() reports (E engine, T PyTorch), what the report shows (`held`: the boundary
casts, as "int8, int32 in the engine"), and, for a node that needs exact a value the engine holds modulo 256, the
op that runs in PyTorch and why. compile() on the scripted program builds those engines and gives eager's outputs,
dtypes and values exactly; full compilation succeeds or names the op; torch.compile(backend="tensorrt") builds
the same engines.
"""

import re
from typing import Callable, NamedTuple

import pytest
import torch

import torch_trt
from harness import FunctionModule, scripted
from torch_trt.backend import dynamo
from torch_trt.errors import Code, TorchTRTError
from torch_trt.targets.reference.builder import Builder
from torch_trt.targets.reference.enums import ErrorCodeTRT

SETTINGS = {"target": "reference", "min_block_size": 1, "device": "cpu"}
HELD = ", int32 in the engine"  # how the report shows a tensor the engine holds as int32
_generator = torch.Generator().manual_seed(0)


def _int8(*shape):
    return torch.randint(-128, 128, shape, generator=_generator, dtype=torch.int8)


def _uint8(*shape):
    return torch.randint(0, 256, shape, generator=_generator, dtype=torch.uint8)


def _dynamic(min_shape, opt_shape, max_shape, dtype):
    return torch_trt.Input(min_shape=min_shape, opt_shape=opt_shape, max_shape=max_shape, dtype=dtype)


class Row(NamedTuple):
    """A program, its inputs, the segments (E/T), report fragments, the op run in PyTorch and its reason, specs."""

    id: str
    program: Callable
    inputs: list
    kinds: str
    held: list
    refused: tuple = None  # (op kind, a fragment of its Reason), for a row with a PyTorch segment
    specs: list = None


ROWS = [
    # values that only cross the boundary: one engine, int32 inside
    Row("int8_arithmetic", lambda x, y: x * 3 + y - 1, [_int8(64), _int8(64)], "E", ["(64,):int8" + HELD]),
    Row("int8_arithmetic_dynamic", lambda x: -x * 5 + 7, [_int8(6, 8)], "E", ["(1..9, 8):int8" + HELD],
        specs=[_dynamic((1, 8), (4, 8), (9, 8), torch.int8)]),
    Row("int8_input_cast_to_float", lambda x: x.float() * 2, [_int8(64)], "E", ["(64,):int8" + HELD]),
    Row("int8_compared_before_any_arithmetic", lambda x: (x > 0) & (x < 100), [_int8(64)], "E", [HELD]),
    Row("uint8_image_channels_last", lambda x: x.permute(0, 3, 1, 2).float() / 255, [_uint8(2, 5, 5, 3)], "E",
        ["(2, 5, 5, 3):uint8" + HELD]),
    Row("int8_output_of_a_constant", lambda x: (x * 2, torch.tensor([1, -2, 3], dtype=torch.int8).expand(x.size(0), 3)),
        [torch.randn(4)], "E", ["(1..5, 3):int8" + HELD], specs=[_dynamic((1,), (3,), (5,), torch.float32)]),
    # wraparound: add/sub/mul results are exact modulo 256, so moving elements and casting back keep eager's values
    Row("moved_after_overflow", lambda x: (x * 3).flip(0)[1:].reshape(7, 9) * 2, [_int8(64)], "E", [HELD]),
    Row("selected_before_overflow", lambda x: torch.relu(x).clamp(0, 100).float() * 2, [_int8(64)], "E", [HELD]),
    # ops that need the wrapped value run in PyTorch, on the value cast back
    Row("compared_after_overflow", lambda x: (x * 3) > 0, [_int8(64)], "ET", [HELD],
        ("aten::gt", "computes in int32 where PyTorch wraps it")),
    Row("cast_to_float_after_overflow", lambda x: (x * 3).float() + 1, [_uint8(64)], "ETE", [HELD],
        ("aten::to", "computes in int32 where PyTorch wraps it")),
    Row("selected_after_overflow", lambda x: torch.relu(x * 3), [_int8(64)], "ET", [HELD],
        ("aten::relu", "computes in int32 where PyTorch wraps it")),
    Row("promoted_after_overflow", lambda x, y: x * 3 + y, [_int8(64), torch.arange(64, dtype=torch.int32)], "ET",
        [HELD], ("aten::add", "computes in int32 where PyTorch wraps it")),
    Row("divided", lambda x: (x * 3) // 2, [_int8(64)], "ET", [HELD],
        ("aten::floor_divide", "TensorRT has no int8 arithmetic")),
    # numbers that PyTorch wraps to the small dtype before comparing or picking: uint8 > -3 is > 253
    Row("compared_with_a_number_out_of_range", lambda x: x.flip(0) > -3, [_uint8(64)], "ET", [HELD],
        ("aten::gt", "the number -3, which PyTorch wraps")),
    Row("clamped_by_a_number_out_of_range", lambda x: x.flip(0).clamp(min=-3), [_uint8(64)], "ET", [HELD],
        ("aten::clamp", "the number -3, which PyTorch wraps")),
    Row("compared_with_a_0d_int64_tensor", lambda x, y: x.flip(0) >= y, [_int8(64), torch.tensor(-300)], "ET",
        [HELD], ("aten::ge", "the 0-d int64 tensor")),
]


def _assert_exact(actual, expected):
    """Same structure, dtypes and values."""
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and torch.equal(actual, expected), (actual, expected)
    else:
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected):
            _assert_exact(got, want)


def _assert_engines_show_their_casts(report):
    """Every int8/uint8 tensor crossing an engine's boundary is reported as held in int32."""
    for segment in report.segments:
        for described in segment.inputs + segment.outputs if segment.kind == "engine" else []:
            assert not re.search(r":u?int8\b", described) or described.endswith(HELD), str(report)


def _inputs_of_another_shape(row):
    """For a dynamic row, inputs of the max shape (the rows' dynamic specs describe their first input)."""
    if not row.specs or not isinstance(row.specs[0], torch_trt.Input) or row.inputs[0].dtype != torch.int8:
        return []
    return [[_int8(*row.specs[0].max_shape)]]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_scripted_programs_cross_as_int32_and_match_eager(row):
    module = scripted(row.program, len(row.inputs))
    report = torch_trt.explain(module, row.specs or row.inputs, **SETTINGS)
    assert "".join("E" if kind == "engine" else "T" for kind in report.kinds) == row.kinds, str(report)
    assert all(fragment in str(report) for fragment in row.held), str(report)
    _assert_engines_show_their_casts(report)
    if row.refused:
        op, why = row.refused
        assert [(node.split(" ")[0], reason.code) for node, reason in report.fallbacks] == [(op, Code.DTYPE)], \
            str(report)
        assert why in str(report.fallbacks[0][1]), str(report)
    compiled = torch_trt.compile(module, row.specs or row.inputs, **SETTINGS)
    assert str(compiled.graph).count("torch_trt::execute_engine(") == row.kinds.count("E"), str(compiled.graph)
    with torch.no_grad():
        for inputs in [row.inputs] + _inputs_of_another_shape(row):
            _assert_exact(compiled(*inputs), module(*inputs))


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_full_compilation_compiles_what_crosses_and_names_what_needs_wrapping(row):
    settings = {**SETTINGS, "require_full_compilation": True}
    module = scripted(row.program, len(row.inputs))
    if not row.refused:
        _assert_exact(torch_trt.compile(module, row.specs or row.inputs, **settings)(*row.inputs), module(*row.inputs))
        return
    with pytest.raises(TorchTRTError, match=row.refused[0]) as raised:
        torch_trt.compile(module, row.specs or row.inputs, **settings)
    assert row.refused[1] in str(raised.value)


def test_uint8_stays_uint8_where_the_engine_only_casts_it_to_float():
    """TensorRT takes a UINT8 input cast to float/half: no cast before the engine; any other use gets int32."""
    image = _uint8(2, 5, 5, 3)
    as_is = torch_trt.compile(scripted(lambda x: x.float() / 255, 1), [image], **SETTINGS)
    permuted = torch_trt.compile(scripted(lambda x: x.permute(0, 3, 1, 2).float() / 255, 1), [image], **SETTINGS)
    assert "aten::to" not in str(as_is.graph), str(as_is.graph)
    assert str(permuted.graph).count("torch_trt::cast_input(") == 1, str(permuted.graph)  # int32 before the engine


@pytest.fixture(name="dynamo_builds")
def dynamo_builds_fixture(fresh_dynamo, monkeypatch):
    """The modules torch.compile(backend="tensorrt") compiles, on a fresh dynamo."""
    built, compile_frozen = [], dynamo.compile_frozen

    def spy(module, specs, settings, device):
        built.append(compile_frozen(module, specs, settings, device))
        return built[-1]

    monkeypatch.setattr(dynamo, "compile_frozen", spy)
    return built


_STITCHING = {"prim::Constant", "prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct",
              "torch_trt::execute_engine", "torch_trt::cast_input", "aten::to"}  # besides the ops run in PyTorch


DYNAMO_ROWS = [row for row in ROWS if row.id in ("int8_arithmetic", "int8_input_cast_to_float",
                                                 "uint8_image_channels_last", "moved_after_overflow",
                                                 "compared_after_overflow")]


@pytest.mark.parametrize("row", DYNAMO_ROWS, ids=[row.id for row in DYNAMO_ROWS])
def test_dynamo_programs_cross_as_int32_and_match_eager(row, dynamo_builds):
    model = FunctionModule(row.program)
    compiled = torch.compile(model, backend="tensorrt", options={"target": "reference", "min_block_size": 1})
    with torch.no_grad():
        _assert_exact(compiled(*row.inputs), model(*row.inputs))
    kinds = [node.kind() for module in dynamo_builds for node in module.graph.nodes()]
    assert kinds.count("torch_trt::execute_engine") == row.kinds.count("E"), kinds
    assert set(kinds) - _STITCHING == ({row.refused[0]} if row.refused else set()), kinds  # nothing else in PyTorch


def test_a_refused_build_runs_its_segment_in_pytorch_or_names_its_ops(monkeypatch):
    """The builder names no node: its segment runs in PyTorch, and full compilation's error lists the ops."""
    def refuse(self, network, config):
        self.error_recorder.report_error(ErrorCodeTRT.UNSPECIFIED_ERROR, "no tactic fits")
        return None

    monkeypatch.setattr(Builder, "build_serialized_network", refuse)
    module, inputs = scripted(lambda x: torch.relu(x * 2), 1), [torch.randn(3)]
    report = torch_trt.explain(module, inputs, **SETTINGS)
    assert report.kinds == ["torch"] and {reason.code for _, reason in report.fallbacks} == {Code.BUILD_REFUSED}
    assert "no tactic fits" in str(report), str(report)
    with pytest.raises(TorchTRTError, match=r"failed to build: .*no tactic fits.*aten::mul.*aten::relu"):
        torch_trt.compile(module, inputs, require_full_compilation=True, **SETTINGS)


def test_a_build_that_names_a_layer_runs_only_its_node_in_pytorch():
    """x[:, :4] of a dim the profile lets be 2 wide reads as a static 4 at the reference's probe sizes; its builder
    refuses that layer by name, so the slice runs in PyTorch and its neighbours stay in engines."""
    module = scripted(lambda x: (x * 2)[:, :4].sin() + 1, 1)
    spec = torch_trt.Input(min_shape=(2, 2), opt_shape=(2, 8), max_shape=(2, 16))
    report = torch_trt.explain(module, [spec], **SETTINGS)
    assert "".join("E" if kind == "engine" else "T" for kind in report.kinds) == "ETE", str(report)
    assert [reason.code for _, reason in report.fallbacks] == [Code.BUILD_REFUSED], str(report)
    compiled = torch_trt.compile(module, [spec], **SETTINGS)
    for width in (3, 8):
        x = torch.randn(2, width)
        torch.testing.assert_close(compiled(x), module(x), rtol=0, atol=0)
