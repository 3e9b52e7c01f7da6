"""Values that follow tensor data are never fixed to what shape analysis's example runs gave."""

import pytest
import torch

import torch_trt
from torch_trt.partitioning.shape_analysis import analyze

NAN = float("nan")
SETTINGS = {"target": "reference", "min_block_size": 1, "device": "cpu"}


class MeanOfTheNumbers(torch.nn.Module):
    def forward(self, x):
        count = x[~torch.isnan(x)].size(0)  # 8 in every NaN-free example run
        return torch.nan_to_num(x, nan=0.0).sum() / count


class BranchesOnACount(torch.nn.Module):
    def forward(self, x):
        if x[~torch.isnan(x)].size(0) == 8:
            return x * 2
        return torch.nan_to_num(x)


class ScalesByTheDistinctSigns(torch.nn.Module):
    def forward(self, x):
        return x * torch.unique(torch.sign(x)).size(0)


class ScalesByTheRowsABranchGives(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 300:
            y = torch.cat([x, x])
        else:
            y = x
        return x * y.size(0)


DATA = [torch.tensor([[1., 2., NAN, 3.], [NAN, 4., 5., 6.]]), torch.full((2, 4), 100.0),
        torch.tensor([[1., -1., 0., 1.]] * 2)]


STATIC, DYNAMIC = torch_trt.Input((2, 4)), torch_trt.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(4, 4))


@pytest.mark.parametrize("module", [MeanOfTheNumbers, BranchesOnACount, ScalesByTheDistinctSigns])
@pytest.mark.parametrize("spec", [STATIC, DYNAMIC])
def test_a_size_or_branch_the_data_decides_follows_the_data(module, spec):
    model = torch.jit.script(module().eval())
    compiled = torch_trt.compile(model, [spec], **SETTINGS)
    for x in DATA:
        torch.testing.assert_close(compiled(x), model(x), equal_nan=True)


def test_rows_a_branch_the_data_decides_are_read_when_the_module_runs():
    """The engine after the branch takes its result as an input, checked on every call: it was built for the rows
    of the examples' branch, and the other branch's rows are an error (in a dynamic profile, a result)."""
    model = torch.jit.script(ScalesByTheRowsABranchGives().eval())
    static, dynamic = (torch_trt.compile(model, [spec], **SETTINGS) for spec in (STATIC, DYNAMIC))
    for x in DATA:
        torch.testing.assert_close(dynamic(x), model(x), equal_nan=True)
        if x.sum() > 300:
            with pytest.raises(RuntimeError, match="outside the engine's profile"):
                static(x)
        else:
            torch.testing.assert_close(static(x), model(x), equal_nan=True)


def _infos(source, specs):
    graph = torch.jit.script(source).graph
    return {value.debugName().split(".")[0]: info for value, info in analyze(graph, specs, "cpu").items()}


def test_sizes_and_integer_indices_are_no_data_read():
    """The size of a tensor and a gather by integer indices depend on shapes only."""
    def gather(x, i):
        n = x.size(0) // 2
        picked = x[i]
        return picked * n

    infos = _infos(gather, [torch_trt.Input((4, 3)), torch_trt.Input((2,), dtype=torch.int64)])
    assert infos["n"].constant and not infos["picked"].problem


def test_a_number_read_from_data_and_a_masked_tensor_follow_the_data():
    def masked(x):
        total = float(x.sum())
        kept = x[x > 0]
        return kept * total

    infos = _infos(masked, [torch_trt.Input((4, 3))])
    assert not infos["total"].constant and "follows tensor data" in infos["total"].describe()
    assert infos["kept"].problem and not infos["kept"].shape_fixed_by_inputs
