"""Compile-time values come only from constants and shapes: a value read from tensor data is never baked in."""

import torch

import torch_trt


class CountAbove(torch.nn.Module):
    def forward(self, x):
        n = int((x > 100).sum())
        return torch.relu(x) * 2 + n


class FlattenBySize(torch.nn.Module):
    def forward(self, x):
        y = torch.relu(x) * 2
        return y.reshape(y.size(0) * y.size(1), -1) + 1  # sizes of a tensor inside the engine


DYNAMIC_ROWS = torch_trt.Input(min_shape=(1, 3, 4), opt_shape=(2, 3, 4), max_shape=(6, 3, 4))


def test_an_int_read_from_data_is_computed_on_every_call():
    module = torch.jit.script(CountAbove())
    compiled = torch_trt.compile(module, inputs=[torch.randn(4, 4)], target="reference", min_block_size=1)
    for x in (torch.full((4, 4), 1000.0), torch.randn(4, 4)):
        torch.testing.assert_close(compiled(x), module(x))


def test_an_int_read_from_data_stays_in_pytorch_with_dynamic_shapes():
    """Shape tensors are computed from shapes only: an int read from data never becomes one."""
    module = torch.jit.script(CountAbove())
    spec = torch_trt.Input(min_shape=(1, 4), opt_shape=(4, 4), max_shape=(8, 4))
    report = torch_trt.explain(module, inputs=[spec], target="reference", min_block_size=1)
    assert any(reason.code.value == "data-dependent value" for _, reason in report.fallbacks), report
    compiled = torch_trt.compile(module, inputs=[spec], target="reference", min_block_size=1, device="cpu")
    for x in (torch.full((3, 4), 1000.0), torch.randn(6, 4)):
        torch.testing.assert_close(compiled(x), module(x))


def test_sizes_of_dynamic_dims_are_computed_inside_the_engine():
    """y.size(0) is dynamic: a shape tensor multiplied by the static y.size(1) (an int the engine evaluates)."""
    module = torch.jit.script(FlattenBySize())
    report = torch_trt.explain(module, inputs=[DYNAMIC_ROWS], target="reference", min_block_size=1,
                               require_full_compilation=True)
    assert report.kinds == ["engine"] and report.segments[0].ops.count("aten::size") == 2, report
    compiled = torch_trt.compile(module, inputs=[DYNAMIC_ROWS], target="reference", min_block_size=1,
                                 device="cpu")
    for rows in (1, 5):
        x = torch.randn(rows, 3, 4)
        torch.testing.assert_close(compiled(x), module(x))


def test_sizes_of_engine_tensors_are_evaluated_inside_the_engine():
    module = torch.jit.script(FlattenBySize())
    report = torch_trt.explain(module, inputs=[torch.randn(2, 3, 4)], target="reference", min_block_size=1)
    assert report.kinds == ["engine"], report
    assert "aten::size" in report.segments[0].ops, report  # run by the size evaluator when the engine is built
    compiled = torch_trt.compile(module, inputs=[torch.randn(2, 3, 4)], target="reference", min_block_size=1)
    x = torch.randn(2, 3, 4)
    torch.testing.assert_close(compiled(x), module(x))


class TracedSize(torch.nn.Module):
    def forward(self, x):
        y = torch.relu(x) * 2
        return y.reshape(y.size(0), -1) + 1


def test_a_traced_size_is_a_compile_time_value():
    traced = torch.jit.trace(TracedSize(), torch.randn(2, 3, 4))
    assert "prim::NumToTensor" in str(traced.graph) and "aten::Int" in str(traced.graph)
    report = torch_trt.explain(traced, inputs=[torch.randn(2, 3, 4)], target="reference", min_block_size=1)
    assert report.kinds == ["engine"], report
