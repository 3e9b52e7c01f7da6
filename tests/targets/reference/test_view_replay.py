"""A program run without code generation makes a one-input step's view with one as_strided call at every input
layout it has seen (view_replay.py)."""

import torch
import torch.fx

from torch_trt.targets.reference.view_replay import replay_views


def _program(compute, inputs=1, weights=None):
    """A generated-program-shaped GraphModule: one step `compute([inputs], weights)` and its result returned."""
    graph = torch.fx.Graph()
    placeholders = [graph.placeholder(f"input_{index}") for index in range(inputs)]
    graph.output(graph.call_function(compute, (placeholders, weights or {})))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


class _Counted:
    """A step that counts its calls."""

    def __init__(self, function):
        self.function, self.calls = function, 0
        self.__name__ = "_compute"

    def __call__(self, inputs, weights):
        self.calls += 1
        return self.function(*inputs)


def test_a_view_step_runs_once_per_input_layout():
    step = _Counted(lambda x: x.reshape(6, 4).t()[1:3])
    program = replay_views(_program(step))
    x = torch.randn(2, 3, 4)
    results = [program(x + i) for i in range(3)]
    transposed = torch.randn(4, 3, 2).permute(2, 1, 0)  # the same shape, other strides: reshape copies it
    results_transposed = [program(transposed) for _ in range(2)]
    assert step.calls == 1 + 2  # once for the contiguous layout; every call for the other, whose result is no view
    for i, result in enumerate(results):
        torch.testing.assert_close(result, (x + i).reshape(6, 4).t()[1:3], rtol=0, atol=0)
    for result in results_transposed:
        torch.testing.assert_close(result, transposed.reshape(6, 4).t()[1:3], rtol=0, atol=0)


def test_a_replayed_view_reads_its_input_in_place():
    program = replay_views(_program(_Counted(lambda x: x[:, 1:])))
    x = torch.zeros(3, 4)
    program(x)
    view = program(x)
    x[0, 3] = 7.0
    assert view[0, 2] == 7.0 and view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_an_input_viewed_at_an_offset_keeps_its_offset():
    program = replay_views(_program(_Counted(lambda x: x[1])))
    base = torch.arange(24.0).reshape(2, 3, 4)
    for index in range(2):
        torch.testing.assert_close(program(base[index]), base[index][1], rtol=0, atol=0)


def test_steps_with_weights_or_a_second_input_are_left_as_they_are():
    step = _Counted(lambda x, y: x[1:])
    two_inputs = replay_views(_program(step, inputs=2))
    weighted = replay_views(_program(_Counted(lambda x: x[1:]), weights={"kernel": None}))
    for program in (two_inputs, weighted):
        (node,) = [n for n in program.graph.nodes if n.op == "call_function"]
        assert isinstance(node.target, _Counted)
    two_inputs(torch.randn(3), torch.randn(3))
    two_inputs(torch.randn(3), torch.randn(3))
    assert step.calls == 2
