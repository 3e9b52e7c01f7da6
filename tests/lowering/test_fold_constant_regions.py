"""Computations on constants that write in place fold to constants (lowering/passes/fold_constant_regions.py)."""

import torch
from torch.testing import FileCheck

import torch_trt
from torch_trt.lowering.passes.fold_constant_regions import fold_constant_regions


class _WindowMask(torch.nn.Module):
    """Swin's shifted-window mask in small: a tensor of x's dtype filled by slice assignments, added to x."""

    def forward(self, x):
        mask = x.new_zeros((4, 4))
        count = 0
        for h in ((0, 2), (2, 4)):
            for w in ((0, 1), (1, 4)):
                mask[h[0]:h[1], w[0]:w[1]] = count
                count += 1
        return torch.relu(x + mask) * 2 - 1


class _ReadBeforeWrite(torch.nn.Module):
    def forward(self, x):
        mask = torch.zeros(4, 4)
        before = torch.relu(x + mask) * 2 - 1
        mask[0:2] = 1.0
        return before, torch.relu(x * mask) * 3 + 1


def test_a_mask_made_by_slice_assignment_is_one_constant():
    graph = torch._C.parse_ir("""graph(%x : Tensor):
        %zero : int = prim::Constant[value=0]()
        %one : int = prim::Constant[value=1]()
        %two : int = prim::Constant[value=2]()
        %none : NoneType = prim::Constant()
        %false : bool = prim::Constant[value=0]()
        %seven : float = prim::Constant[value=7.]()
        %size : int[] = prim::ListConstruct(%two, %two)
        %mask : Tensor = aten::zeros(%size, %none, %none, %none, %none)
        %row : Tensor = aten::slice(%mask, %zero, %zero, %one, %one)
        %written : Tensor = aten::fill_(%row, %seven)
        %y : Tensor = aten::add(%x, %mask, %one)
        return (%y)""")
    fold_constant_regions(graph)
    FileCheck().check_not("aten::fill_").check_not("aten::slice").run(str(graph))
    (add,) = graph.findAllNodes("aten::add")
    torch.testing.assert_close(add.inputsAt(1).toIValue(), torch.tensor([[7.0, 7.0], [0.0, 0.0]]))


def test_a_mask_made_by_slice_assignment_and_returned_is_not_one_constant():
    """Every call returns a tensor of its own, which the caller may write: one constant would be every call's."""
    graph = torch._C.parse_ir("""graph():
        %zero : int = prim::Constant[value=0]()
        %one : int = prim::Constant[value=1]()
        %none : NoneType = prim::Constant()
        %seven : float = prim::Constant[value=7.]()
        %size : int[] = prim::ListConstruct(%one, %one)
        %mask : Tensor = aten::zeros(%size, %none, %none, %none, %none)
        %written : Tensor = aten::fill_(%mask, %seven)
        return (%mask)""")
    fold_constant_regions(graph)
    FileCheck().check("aten::fill_").run(str(graph))


def test_scripted_window_mask_compiles_to_one_engine_with_eager_results():
    module, x = _WindowMask().eval(), torch.randn(2, 4, 4)
    report = torch_trt.explain(torch.jit.script(module), [x], target="reference", min_block_size=1)
    assert report.engine_count == 1 and not report.fallbacks, report
    compiled = torch_trt.compile(torch.jit.script(module), inputs=[x], target="reference", min_block_size=1)
    torch.testing.assert_close(compiled(x), module(x))


def test_a_tensor_read_before_its_last_write_is_not_folded_to_its_final_value():
    module, x = _ReadBeforeWrite().eval(), torch.randn(4, 4)
    compiled = torch_trt.compile(torch.jit.script(module), inputs=[x], target="reference", min_block_size=1)
    for got, expected in zip(compiled(x), module(x)):
        torch.testing.assert_close(got, expected)


class _PlusThreeInAColumn(torch.nn.Module):
    def forward(self, x):
        offsets = torch.zeros(4, 2)
        offsets[:, 0] += 3  # through dynamo's trace, the 3 is a 0-dim tensor constant
        return x + offsets


def test_a_region_reading_a_number_held_in_a_0_dim_constant_folds(fresh_dynamo):
    """The region's constants are copied in; a 0-dim tensor constant came out as the Python number it holds, which
    the copy could not take (BackendCompilerFailed: 'int' object is not iterable; HF BEiT's relative positions)."""
    module = _PlusThreeInAColumn().eval()
    compiled = torch.compile(module, backend="tensorrt",
                             options={"target": "reference", "min_block_size": 1, "pass_through_build_failures": True})
    x = torch.randn(4, 2)
    torch.testing.assert_close(compiled(x), module(x))
