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
        return y.reshape(y.size(0) * y.size(1), -1) + 1  # sizes of a tensor inside the engine: evaluated at build


def test_an_int_read_from_data_is_computed_on_every_call():
    module = torch.jit.script(CountAbove())
    compiled = torch_trt.compile(module, inputs=[torch.randn(4, 4)], target="reference", min_block_size=1)
    for x in (torch.full((4, 4), 1000.0), torch.randn(4, 4)):
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
