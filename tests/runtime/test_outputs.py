"""A compiled module's results are tensors of their own on every call, as eager's are, and alias as eager's do."""

import pytest
import torch

import torch_trt


class ReturnsConstants(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x):
        ones = torch.ones(2, 3)
        return torch.zeros(2, 3), x + 1, self.scale * 2, ones, ones, (torch.arange(4.0) * 2)[1:]


def _compiled(module, front, example):
    if front == "torchscript":
        return torch_trt.compile(torch.jit.script(module), [example], target="reference", min_block_size=1,
                                 device="cpu")
    return torch.compile(module, backend="tensorrt", options={"target": "reference", "min_block_size": 1})


@pytest.mark.parametrize("front", ["torchscript", "dynamo"])
def test_a_returned_constant_is_a_new_tensor_on_every_call(front, fresh_dynamo):
    """Freezing makes these results graph constants: every call returned the one tensor, so writing to a result
    changed the next call's."""
    module = ReturnsConstants().eval()
    compiled = _compiled(module, front, torch.randn(2, 3))
    x = torch.randn(2, 3)
    with torch.no_grad():
        for result in compiled(x):
            result.add_(5)
        results, expected = compiled(x), module(x)
    for index, (result, wanted) in enumerate(zip(results, expected)):
        torch.testing.assert_close(result, wanted, msg=f"result {index}")
    assert results[3] is results[4], "one tensor returned twice is one tensor, as in eager"


def _fill_row_with_its_sum(x):
    row = x[0]
    total = row.sum().item()  # a graph break: the rest writes through the view the first graph returned
    row.fill_(total)
    return x * 2


def _zero_a_column(x):
    doubled = x * 2
    column = doubled[:, 0]
    total = column.sum().item()
    column.zero_()
    return doubled + total


@pytest.mark.parametrize("function", [_fill_row_with_its_sum, _zero_a_column])
def test_writes_after_a_graph_break_reach_what_the_view_views(function, fresh_dynamo):
    """The graph before the break returns a view of its input (or of its other result); as a copy, the writes after
    the break were lost."""
    compiled = torch.compile(function, backend="tensorrt", options={"target": "reference", "min_block_size": 1})
    x = torch.randn(4, 3)
    expected_x = x.clone()
    with torch.no_grad():
        result, expected = compiled(x), function(expected_x)
    torch.testing.assert_close(result, expected)
    torch.testing.assert_close(x, expected_x)


def _views(x):
    tripled = x * 3
    return x.t(), x[:, 1:], tripled, tripled[0], tripled.view(-1)


def test_results_view_the_arguments_and_results_they_view_in_eager(fresh_dynamo):
    compiled = torch.compile(_views, backend="tensorrt", dynamic=True,
                             options={"target": "reference", "min_block_size": 1})
    for shape in ((4, 3), (5, 7)):
        x = torch.randn(shape)
        with torch.no_grad():
            results = compiled(x)
        for result, expected in zip(results, _views(x)):
            torch.testing.assert_close(result, expected)
            assert result.stride() == expected.stride()
        transposed, columns, tripled, first_row, flat = results
        assert transposed.data_ptr() == x.data_ptr() and columns.untyped_storage().data_ptr() == x.data_ptr()
        first_row.zero_()
        assert (tripled[0] == 0).all() and (flat[:shape[1]] == 0).all()
