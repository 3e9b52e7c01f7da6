"""Each lowering pass on a small graph: before -> after, checked with FileCheck."""

import pytest
import torch
from torch.testing import FileCheck

from torch_trt.lowering.passes.convolution_forms import normalize_convolution
from torch_trt.lowering.passes.matmul_forms import mm_to_matmul, unpack_addmm, unpack_linear
from torch_trt.lowering.passes.remove_no_ops import remove_no_ops
from torch_trt import lowering

CASES = [  # id, pass, graph before, ops that must appear after, ops that must be gone
    ("linear", unpack_linear, """graph(%x : Tensor, %w : Tensor, %b : Tensor):
        %y : Tensor = aten::linear(%x, %w, %b)
        return (%y)""", ["aten::t", "aten::matmul", "aten::add"], ["aten::linear"]),
    ("addmm", unpack_addmm, """graph(%b : Tensor, %x : Tensor, %w : Tensor):
        %one : int = prim::Constant[value=1]()
        %y : Tensor = aten::addmm(%b, %x, %w, %one, %one)
        return (%y)""", ["aten::matmul", "aten::mul", "aten::add"], ["aten::addmm"]),
    ("mm", mm_to_matmul, """graph(%a : Tensor, %b : Tensor):
        %y : Tensor = aten::mm(%a, %b)
        %z : Tensor = aten::bmm(%y, %b)
        return (%z)""", ["aten::matmul", "aten::matmul"], ["aten::mm", "aten::bmm"]),
    ("conv2d", normalize_convolution, """graph(%x : Tensor, %w : Tensor, %b : Tensor):
        %s : int[] = prim::Constant[value=[1, 1]]()
        %p : int[] = prim::Constant[value=[0, 0]]()
        %g : int = prim::Constant[value=1]()
        %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %s, %g)
        return (%y)""", ["aten::_convolution"], ["aten::conv2d"]),
    ("conv_transpose2d", normalize_convolution, """graph(%x : Tensor, %w : Tensor, %b : Tensor):
        %s : int[] = prim::Constant[value=[1, 1]]()
        %p : int[] = prim::Constant[value=[0, 0]]()
        %g : int = prim::Constant[value=1]()
        %y : Tensor = aten::conv_transpose2d(%x, %w, %b, %s, %p, %p, %g, %s)
        return (%y)""", ["aten::_convolution"], ["aten::conv_transpose2d"]),
    ("dropout_contiguous", remove_no_ops, """graph(%x : Tensor):
        %p : float = prim::Constant[value=0.5]()
        %f : bool = prim::Constant[value=0]()
        %fmt : int = prim::Constant[value=0]()
        %y : Tensor = aten::dropout(%x, %p, %f)
        %z : Tensor = aten::contiguous(%y, %fmt)
        %d : Tensor = aten::detach(%z)
        return (%d)""", [], ["aten::dropout", "aten::contiguous", "aten::detach"]),
]


@pytest.mark.parametrize("name,lowering_pass,before,present,absent", CASES, ids=[c[0] for c in CASES])
def test_pass(name, lowering_pass, before, present, absent):
    graph = torch._C.parse_ir(before)
    lowering_pass(graph)
    torch._C._jit_pass_dce(graph)
    torch._C._jit_pass_lint(graph)
    check = FileCheck()
    for op in present:
        check = check.check(op)
    for op in absent:
        check = check.check_not(op)
    check.run(str(graph))


def test_every_pass_has_a_docstring():
    assert all(p.__doc__ and len(p.__doc__.strip().splitlines()) == 1 for p in lowering.PASSES)


def test_linear_without_bias_has_no_add():
    graph = torch._C.parse_ir("""graph(%x : Tensor, %w : Tensor):
        %b : NoneType = prim::Constant()
        %y : Tensor = aten::linear(%x, %w, %b)
        return (%y)""")
    unpack_linear(graph)
    torch._C._jit_pass_dce(graph)
    FileCheck().check("aten::matmul").check_not("aten::add").check_not("aten::linear").run(str(graph))


def _checked_relu(x):
    if x.dim() != 2:
        raise ValueError("expected 2D input")
    return torch.relu(x)


def test_exception_branches_are_removed():
    from torch_trt.lowering.passes.remove_exception_branches import remove_exception_branches

    graph = torch.jit.script(_checked_relu).graph.copy()
    FileCheck().check("prim::If").check("prim::RaiseException").run(str(graph))
    remove_exception_branches(graph)
    torch._C._jit_pass_dce(graph)
    FileCheck().check_not("prim::If").check_not("aten::dim").check("aten::relu").run(str(graph))


def test_training_mode_dropout_is_kept():
    graph = torch._C.parse_ir("""graph(%x : Tensor):
        %p : float = prim::Constant[value=0.5]()
        %t : bool = prim::Constant[value=1]()
        %y : Tensor = aten::dropout(%x, %p, %t)
        return (%y)""")
    remove_no_ops(graph)
    FileCheck().check("aten::dropout").run(str(graph))
