"""Each lowering pass on a small graph: before -> after, checked with FileCheck."""

from typing import List, Optional

import pytest

import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import FileCheck

from graph_checks import assert_ops

from torch_trt.lowering.passes.convolution_forms import explicit_convolution_padding, normalize_convolution
from torch_trt.lowering.passes.matmul_forms import mm_to_matmul, unpack_addmm, unpack_linear
from torch_trt.lowering.passes.fused_attention import lower_fused_attention
from torch_trt.lowering.passes.list_comprehensions import fold_list_comprehensions
from torch_trt.lowering.passes.remove_dead_loops import remove_dead_loops
from torch_trt.lowering.passes.remove_no_ops import remove_no_ops, view_to_reshape
from torch_trt.lowering.passes.traced_sizes import fold_traced_sizes
from torch_trt.lowering.rewrite import replace_node
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
        return (%z)""", ["aten::matmul", "aten::bmm"], ["aten::mm"]),
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
    ("dropout_detach", remove_no_ops, """graph(%x : Tensor):
        %p : float = prim::Constant[value=0.5]()
        %f : bool = prim::Constant[value=0]()
        %y : Tensor = aten::dropout(%x, %p, %f)
        %d : Tensor = aten::detach(%y)
        return (%d)""", [], ["aten::dropout", "aten::detach"]),
    ("two_linears_without_bias", unpack_linear, """graph(%x : Tensor, %w : Tensor):
        %none : NoneType = prim::Constant()
        %y : Tensor = aten::linear(%x, %w, %none)
        %z : Tensor = aten::linear(%y, %w, %none)
        return (%z)""", ["aten::matmul", "aten::matmul"], ["aten::linear", "aten::add"]),
    ("view", view_to_reshape, """graph(%x : Tensor):
        %size : int[] = prim::Constant[value=[-1]]()
        %y : Tensor = aten::view(%x, %size)
        return (%y)""", ["aten::reshape"], ["aten::view"]),
    ("conv2d_same_padding_kept", normalize_convolution, """graph(%x : Tensor, %w : Tensor, %b : Tensor):
        %s : int[] = prim::Constant[value=[1, 1]]()
        %p : str = prim::Constant[value="same"]()
        %g : int = prim::Constant[value=1]()
        %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %s, %g)
        return (%y)""", ["aten::conv2d"], ["aten::_convolution"]),
    ("convolution_mode_runtime_weight_kept", explicit_convolution_padding, """graph(%x : Tensor, %w : Tensor):
        %s : int[] = prim::Constant[value=[1, 1]]()
        %p : str = prim::Constant[value="same"]()
        %g : int = prim::Constant[value=1]()
        %none : NoneType = prim::Constant()
        %y : Tensor = aten::_convolution_mode(%x, %w, %none, %s, %p, %s, %g)
        return (%y)""", ["aten::_convolution_mode"], ["aten::_convolution("]),
    ("unused_loop", remove_dead_loops, """graph(%x : Tensor):
        %n : int = prim::Constant[value=3]()
        %t : bool = prim::Constant[value=1]()
        %size : int[] = aten::size(%x)
        %p : int = prim::Loop(%n, %t, %n)
          block0(%i : int, %acc : int):
            %d : int = aten::__getitem__(%size, %i)
            %next : int = aten::mul(%acc, %d)
            -> (%t, %next)
        %y : Tensor = aten::relu(%x)
        return (%y)""", ["aten::relu"], ["prim::Loop", "aten::size"]),
]


@pytest.mark.parametrize("name,lowering_pass,before,present,absent", CASES, ids=[c[0] for c in CASES])
def test_pass(name, lowering_pass, before, present, absent):
    graph = torch._C.parse_ir(before)
    lowering_pass(graph)
    torch._C._jit_pass_dce(graph)
    torch._C._jit_pass_lint(graph)
    assert_ops(graph, present, absent)


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


def _linear_with_a_checked_bias(x: torch.Tensor, b: Optional[torch.Tensor]):
    if b is not None and b.shape != (3,):
        raise ValueError("bad bias")
    return torch.nn.functional.linear(x, x, b)


def test_an_exception_branch_that_gives_a_value_back_is_removed():
    """F.multi_head_attention_forward checks a bias's shape so: the If that raises gives the refined bias back. Left
    in, it kept a frozen bias Optional, and unpack_linear's add of it failed an internal assert of TorchScript."""
    from torch_trt.lowering.passes.remove_exception_branches import remove_exception_branches

    graph = torch.jit.script(_linear_with_a_checked_bias).graph.copy()
    remove_exception_branches(graph)
    torch._C._jit_pass_dce(graph)
    FileCheck().check_not("prim::RaiseException").check("aten::linear").run(str(graph))


def test_training_mode_dropout_is_kept():
    graph = torch._C.parse_ir("""graph(%x : Tensor):
        %p : float = prim::Constant[value=0.5]()
        %t : bool = prim::Constant[value=1]()
        %y : Tensor = aten::dropout(%x, %p, %t)
        return (%y)""")
    remove_no_ops(graph)
    FileCheck().check("aten::dropout").run(str(graph))


def test_rewrites_stay_after_an_in_place_write():
    graph = torch._C.parse_ir("""graph(%x : Tensor, %w : Tensor, %b : Tensor):
        %two : int = prim::Constant[value=2]()
        %scaled : Tensor = aten::mul_(%x, %two)
        %y : Tensor = aten::linear(%x, %w, %b)
        return (%y)""")
    unpack_linear(graph)
    FileCheck().check("aten::mul_").check("aten::t").check("aten::matmul").check("aten::add").run(str(graph))


def test_loop_that_writes_is_kept():
    graph = torch._C.parse_ir("""graph(%x : Tensor):
        %n : int = prim::Constant[value=3]()
        %t : bool = prim::Constant[value=1]()
        %one : int = prim::Constant[value=1]()
        %p : int = prim::Loop(%n, %t, %n)
          block0(%i : int, %acc : int):
            %w : Tensor = aten::add_(%x, %one, %one)
            -> (%t, %acc)
        return (%x)""")
    remove_dead_loops(graph)
    FileCheck().check("prim::Loop").check("aten::add_").run(str(graph))


def test_replacement_with_other_arity_is_refused():
    graph = torch._C.parse_ir("""graph(%x : Tensor):
        %y : Tensor = aten::relu(%x)
        return (%y)""")
    with pytest.raises(ValueError, match="aten::relu"):
        replace_node(graph, graph.findNode("aten::relu"), """graph(%x, %extra):
        return (%x)""")


def test_fused_attention_is_lowered_to_matmul_and_softmax():
    graph = torch._C.parse_ir("""graph(%q : Tensor, %wqkv : Tensor, %bqkv : Tensor, %wo : Tensor, %bo : Tensor):
        %e : int = prim::Constant[value=16]()
        %h : int = prim::Constant[value=2]()
        %none : NoneType = prim::Constant()
        %false : bool = prim::Constant[value=0]()
        %true : bool = prim::Constant[value=1]()
        %y : Tensor, %weights : Tensor = aten::_native_multi_head_attention(%q, %q, %q, %e, %h, %wqkv, %bqkv, %wo, %bo, %none, %false, %true, %none)
        return (%y)""")
    lower_fused_attention(graph)
    torch._C._jit_pass_dce(graph)
    FileCheck().check("aten::linear").check("aten::matmul").check("aten::softmax").check("aten::matmul") \
        .check_not("prim::If").check_not("_native_multi_head_attention").run(str(graph))


def _traced_size_arithmetic(x):
    pad = (4 - x.size(1) % 3) % 3  # Swin's padding arithmetic: remainder and rsub
    return torch.nn.functional.pad(x, (0, pad)).reshape(x.size(0) * 4, -1)[:, :torch.div(x.size(1), 4,
                                                                                          rounding_mode="trunc")]


def test_traced_size_arithmetic_becomes_int_arithmetic():
    graph = torch.jit.trace(_traced_size_arithmetic, torch.randn(2, 16)).graph
    FileCheck().check("prim::NumToTensor").check("aten::Int").run(graph)
    fold_traced_sizes(graph)
    FileCheck().check_not("aten::Int").check_not("prim::NumToTensor").check("aten::floordiv").run(graph)
    function = torch._C._create_function_from_graph("folded", graph)
    x = torch.randn(3, 16)
    assert torch.equal(function(x), _traced_size_arithmetic(x))


@torch.jit.script
def _size_from_data(x):
    return x.reshape(int(x.sum()), -1)


def test_tensor_data_read_by_int_is_kept():
    graph = _size_from_data.graph.copy()
    fold_traced_sizes(graph)
    FileCheck().check("aten::Int").run(graph)


def _repeated(x: float) -> List[float]:
    return [x for _ in range(2)]  # as F.interpolate builds its scale factors


def _counted(x: float) -> List[float]:
    return [x * i for i in range(2)]  # each element another value, which the loop computes


@pytest.mark.parametrize("function,present,absent", [(_repeated, ["prim::ListConstruct"], ["prim::Loop"]),
                                                     (_counted, ["prim::Loop", "aten::append"], [])],
                         ids=["repeated_value", "value_of_the_index"])
def test_fold_list_comprehensions(function, present, absent):
    graph = torch.jit.script(function).graph.copy()
    fold_list_comprehensions(graph)
    torch._C._jit_pass_dce(graph)
    torch._C._jit_pass_lint(graph)
    assert_ops(graph, present, absent)
    assert torch._C._create_function_from_graph("folded", graph)(1.5) == function(1.5)


class _PaddingArgument(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3, 2, 2))

    def forward(self, x, padding: str):
        return F.conv2d(x, self.weight, None, 1, padding)


@pytest.mark.parametrize("how", ["scripted", "traced"])
def test_string_padding_becomes_explicit(how):
    module = nn.Sequential(nn.Conv2d(3, 4, (2, 3), padding="same"), nn.Conv2d(4, 2, 3, padding="valid")).eval()
    x = torch.randn(1, 3, 7, 8)
    frozen = torch.jit.freeze(torch.jit.script(module) if how == "scripted" else torch.jit.trace(module, x))
    explicit_convolution_padding(frozen.graph)
    normalize_convolution(frozen.graph)
    torch._C._jit_pass_dce(frozen.graph)
    torch._C._jit_pass_lint(frozen.graph)
    assert_ops(frozen.graph, ["aten::constant_pad_nd", "aten::_convolution", "aten::_convolution"],
               ["aten::conv2d", "aten::_convolution_mode"])
    torch.testing.assert_close(frozen(x), module(x))


def test_padding_argument_is_kept():
    frozen = torch.jit.freeze(torch.jit.script(_PaddingArgument().eval()))
    explicit_convolution_padding(frozen.graph)
    FileCheck().check("aten::conv2d").check_not("aten::_convolution").run(frozen.graph)
