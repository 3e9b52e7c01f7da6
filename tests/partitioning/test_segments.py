"""End-to-end partitions: which segments a model compiles to, and that it still gives eager's outputs."""

from typing import List, Tuple

import pytest
import torch

import torch_trt


def chain(x):
    """Five converted ops: one engine block at the default min_block_size."""
    return torch.sigmoid(torch.relu(x) * 2 + 1) - 0.5


class Start(torch.nn.Module):
    def forward(self, x):
        return chain(torch.ops.torch_trt_test.opaque(x, 0))


class Middle(torch.nn.Module):
    def forward(self, x):
        return chain(torch.ops.torch_trt_test.opaque(chain(x), 1))


class End(torch.nn.Module):
    def forward(self, x):
        return torch.ops.torch_trt_test.opaque(chain(x), 0)


class Many(torch.nn.Module):
    def forward(self, x):
        x = torch.ops.torch_trt_test.opaque(chain(x), 0)
        x = torch.ops.torch_trt_test.opaque(chain(x), 1)
        return torch.ops.torch_trt_test.opaque(chain(x), 1)


class Shared(torch.nn.Module):
    """`y` is read by the PyTorch opaque op and by the second engine; it is computed once."""

    def forward(self, x):
        y = chain(x)
        return chain(torch.ops.torch_trt_test.opaque(y, 0)) * y


class ListAndTuple(torch.nn.Module):
    def forward(self, x) -> Tuple[torch.Tensor, List[torch.Tensor], int]:
        y = chain(x)
        z = torch.ops.torch_trt_test.opaque(y, 0)
        return chain(z), [y, z], x.size(1)


class IfAndLoop(torch.nn.Module):
    def forward(self, x):
        y = chain(x)
        if bool(y.sum() > 0):
            y = y * 2
        for _ in range(x.size(0)):
            y = y + 1
        return chain(y)


class InPlaceOnInput(torch.nn.Module):
    """The engines read `x` before and after the in-place add, in that order."""

    def forward(self, x):
        before = chain(x)
        x.add_(1)
        return chain(x) + before


class Item(torch.nn.Module):
    """`.item()` runs in PyTorch, and so does the multiplication reading its number."""

    def forward(self, x):
        y = chain(x)
        return chain(y * y.sum().item())


class LongInput(torch.nn.Module):
    def forward(self, x, i):
        return chain(x + i) * i


class DoubleInput(torch.nn.Module):
    def forward(self, x):
        return chain(x) * x


class Interleaved(torch.nn.Module):
    """In graph order engine, torch, engine, torch; the two engine blocks can run first, as one."""

    def forward(self, x):
        y = chain(x)
        t = torch.ops.torch_trt_test.opaque(x, 0)
        z = chain(y)
        return torch.ops.torch_trt_test.opaque(z, 1), t


class SizeOfPyTorchResult(torch.nn.Module):
    """The engine gets its own copy of the `size` chain; PyTorch keeps one for the int output."""

    def forward(self, x):
        y = torch.ops.torch_trt_test.opaque(x, 1)
        return chain(y.view(y.size(0), -1)), y.size(1)


def _x(*shape):
    return torch.randn(*shape)


CASES = [  # id, module, inputs, expected segments, settings
    ("start", Start(), [_x(3, 4)], "TE", {}),
    ("middle", Middle(), [_x(3, 4)], "ETE", {}),
    ("end", End(), [_x(3, 4)], "ET", {}),
    ("five_plus_segments", Many(), [_x(3, 4)], "ETETET", {}),
    ("value_used_by_both", Shared(), [_x(3, 4)], "ETE", {}),
    ("list_and_tuple_outputs", ListAndTuple(), [_x(3, 4)], "ETE", {}),
    ("if_and_loop", IfAndLoop(), [_x(3, 4)], "ETE", {}),
    ("in_place_on_input", InPlaceOnInput(), [_x(3, 4)], "ETE", {}),
    ("item_feeds_arithmetic", Item(), [_x(3, 4)], "ETE", {}),
    ("int64_without_truncation", LongInput(), [_x(3, 4), torch.randint(0, 5, (3, 4))], "E", {}),
    ("int64_with_truncation", LongInput(), [_x(3, 4), torch.randint(0, 5, (3, 4))], "E",
     {"truncate_long_and_double": True}),
    ("float64_without_truncation", DoubleInput(), [_x(3, 4).double()], "T", {}),
    ("float64_with_truncation", DoubleInput(), [_x(3, 4).double()], "E", {"truncate_long_and_double": True}),
    ("torch_executed_ops", Start(), [_x(3, 4)], "TETE", {"torch_executed_ops": {"aten::add"}, "min_block_size": 2}),
    ("torch_executed_ops_overload", Start(), [_x(3, 4)], "TETE",
     {"torch_executed_ops": {"aten::add.Scalar"}, "min_block_size": 2}),
    ("min_block_size_merges", Middle(), [_x(3, 4)], "ETET",  # each lone aten::sub joins the PyTorch ops beside it
     {"torch_executed_ops": {"aten::sigmoid"}, "min_block_size": 3}),
    ("min_block_size_drops_all", Start(), [_x(3, 4)], "T", {"torch_executed_ops": {"aten::add"}, "min_block_size": 3}),
    ("interleaved_blocks_join", Interleaved(), [_x(3, 4)], "ET", {}),
    ("static_chain_copied", SizeOfPyTorchResult(), [_x(3, 4)], "TE", {"min_block_size": 6}),
]


@pytest.mark.parametrize("name,module,inputs,kinds,settings", CASES, ids=[c[0] for c in CASES])
def test_partition(name, module, inputs, kinds, settings, check_partition, device):
    check_partition(module, inputs, kinds, device, **settings)


def test_middle_op_without_converter_runs_between_two_engines(check_partition):
    compiled, report = check_partition(Middle(), [_x(5, 6)], "ETE")
    assert [s.ops for s in report.segments][1] == ["torch_trt_test::opaque"]
    assert report.fallbacks[0][1].code.value == "no converter"
    graph = str(compiled.graph)
    assert graph.index("execute_engine") < graph.index("torch_trt_test::opaque") < graph.rindex("execute_engine")


def test_in_place_write_reaches_the_caller():
    compiled = torch_trt.compile(InPlaceOnInput(), [_x(3, 4)], target="reference")
    x = _x(3, 4)
    eager_x, compiled_x = x.clone(), x.clone()
    torch.testing.assert_close(compiled(compiled_x), InPlaceOnInput()(eager_x))
    torch.testing.assert_close(compiled_x, eager_x)


class ChunkThenWrite(torch.nn.Module):
    def forward(self, x):
        first, _ = x.chunk(2)
        x.mul_(2)
        return first * 1


class WriteThroughSplit(torch.nn.Module):
    def forward(self, x):
        first, _ = x.split(2)
        first.zero_()
        return x * 1


class WriteThroughTypeAs(torch.nn.Module):
    def forward(self, x):
        y = x.type_as(x)  # x itself: the dtypes agree
        y.mul_(2)
        return x + 0


@pytest.mark.parametrize("module", [ChunkThenWrite(), WriteThroughSplit(), torch.jit.trace(WriteThroughTypeAs(),
                                                                                           _x(4))],
                         ids=["chunk_then_write", "write_through_split", "write_through_type_as_traced"])
def test_views_and_writes_through_them_behave_as_in_eager(module):
    """chunk, split and unbind return a list of views of their input; type_as returns its input itself: an engine
    holding them would compute from copies, blind to writes to or through them."""
    compiled = torch_trt.compile(module, [_x(4)], target="reference", min_block_size=1)
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    eager_x, compiled_x = x.clone(), x.clone()
    torch.testing.assert_close(compiled(compiled_x), module(eager_x))
    torch.testing.assert_close(compiled_x, eager_x)


class WrittenAfterItsConstantStart(torch.nn.Module):
    def forward(self, x):
        m = torch.zeros(2)
        m[0] = 1.0
        m.add_(x)  # constants up to here: no one constant can stand for m
        return m


class EngineOutputWrittenLater(torch.nn.Module):
    def forward(self, x):
        m = torch.zeros(2)  # an engine with no inputs
        m[0] = 1.0
        y = x.relu() + m
        m[1] = 3.0
        return y, m


@pytest.mark.parametrize("module", [WrittenAfterItsConstantStart(), EngineOutputWrittenLater()],
                         ids=["written_after_its_constant_start", "engine_output_written_later"])
def test_a_tensor_made_from_constants_and_written_in_place_is_made_anew_on_every_call(module):
    """Folded into a constant (lowering), or an engine call with constant inputs folded by TorchScript's executor
    once it has profiled two calls, such a tensor was one tensor, shared by the calls: each carried its writes into the
    next."""
    compiled = torch_trt.compile(module, [torch.zeros(2)], target="reference", min_block_size=1)
    for k in range(4):
        x = torch.full((2,), float(k))
        torch.testing.assert_close(compiled(x), module(x))


class ReturnsItsConstantStart(torch.nn.Module):
    def forward(self, x):
        m = torch.zeros(2)
        m[0] = 1.0
        return x + 1, m


def test_a_returned_tensor_made_from_constants_is_the_callers_own():
    """Folded into one constant, the returned mask was every call's: a caller's write to one reached the next."""
    compiled = torch_trt.compile(ReturnsItsConstantStart(), [torch.zeros(2)], target="reference", min_block_size=1)
    compiled(torch.ones(2))[1].add_(5)
    torch.testing.assert_close(compiled(torch.ones(2))[1], torch.tensor([1.0, 0.0]))


def test_truncation_casts_around_the_engine(check_partition):
    compiled, report = check_partition(LongInput(), [_x(3, 4), torch.randint(0, 5, (3, 4))], "E",
                                       truncate_long_and_double=True)
    assert "%i.1 (3, 4):int64, int32 in the engine" in report.segments[0].inputs  # the report shows the cast
    assert str(compiled.graph).count("torch_trt::cast_input(") == 1  # int64 -> int32 before; the output is float32
    assert "aten::to(" not in str(compiled.graph)


def test_int64_enters_engines_without_truncation(check_partition):
    """int64 is a native IO type of TensorRT 10+: no cast at the boundary, and the engine computes in int64."""
    i = torch.randint(0, 5, (3, 4))
    compiled, report = check_partition(LongInput(), [_x(3, 4), i], "E")
    assert "%i.1 (3, 4):int64" in report.segments[0].inputs
    assert "aten::to(" not in str(compiled.graph)
    x = _x(3, 4)
    torch.testing.assert_close(compiled(x, i), LongInput()(x, i))


DYNAMIC = torch_trt.Input(min_shape=(1, 4), opt_shape=(3, 4), max_shape=(8, 4))


def test_dynamic_shapes_give_each_engine_a_profile(device):
    report = torch_trt.explain(Middle(), [DYNAMIC], target="reference", device=device)
    assert report.kinds == ["engine", "torch", "engine"]
    assert report.segments[2].inputs[0].endswith(" (1..8, 4):float32")
    compiled = torch_trt.compile(Middle(), [DYNAMIC], target="reference", device=device)
    for rows in (1, 5, 8):
        x = _x(rows, 4).to(device)
        torch.testing.assert_close(compiled(x), Middle()(x))


class DynamicView(torch.nn.Module):
    def forward(self, x):
        y = torch.ops.torch_trt_test.opaque(x, 0)
        return chain(y).view(y.size(0), -1)


def test_size_of_a_dynamic_dim_is_computed_in_the_engine(device):
    """The size of a dynamic dim is a shape tensor inside the engine: the view does not split it off."""
    compiled = torch_trt.compile(DynamicView(), [DYNAMIC], target="reference", device=device)
    report = torch_trt.explain(DynamicView(), [DYNAMIC], target="reference", device=device)
    assert report.kinds == ["torch", "engine"]
    ops = report.segments[1].ops
    assert "aten::size" in ops and ops[-1] == "aten::reshape"  # lowering turns every view into reshape
    for rows in (1, 6):
        x = _x(rows, 4).to(device)
        torch.testing.assert_close(compiled(x), DynamicView()(x))


class ViewByOtherSize(torch.nn.Module):
    """The engine reads z only for its shape: z enters it, and its size is computed there."""

    def forward(self, x):
        z = torch.ops.torch_trt_test.opaque(x, 0)
        return chain(x).view(z.size(0), 2, -1)


def test_a_tensor_read_for_its_dynamic_size_enters_the_engine(device):
    report = torch_trt.explain(ViewByOtherSize(), [DYNAMIC], target="reference", device=device)
    assert report.kinds == ["torch", "engine"]
    assert len(report.segments[1].inputs) == 2, report  # x, and the opaque op's output for its size
    compiled = torch_trt.compile(ViewByOtherSize(), [DYNAMIC], target="reference", device=device)
    x = _x(5, 4).to(device)
    torch.testing.assert_close(compiled(x), ViewByOtherSize()(x))


class DataDependent(torch.nn.Module):
    def forward(self, x):
        return chain(torch.nonzero(x > 0).float()), chain(x)


def test_data_dependent_shapes_stay_in_pytorch(check_partition):
    _, report = check_partition(DataDependent(), [_x(3, 4)], "ET")
    assert any(reason.code.value == "unsupported shape" for _, reason in report.fallbacks)
    compiled = torch_trt.compile(DataDependent(), [_x(3, 4)], target="reference")
    for _ in range(3):  # any number of nonzero elements
        x = _x(3, 4)
        for got, want in zip(compiled(x), DataDependent()(x)):
            torch.testing.assert_close(got, want)
