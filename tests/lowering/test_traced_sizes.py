"""Traced size arithmetic read as an int, a Scalar or a float becomes int arithmetic; reads of tensor data stay.

Each traced case is a pattern transformers 5.17 traces (llama's and qwen2's mask and position ranges, slices from
the end) beside a read of tensor data that must keep running in PyTorch. IR-level: the graph after
fold_traced_sizes and its values on another shape. Model-level: each case, and DeBERTa's torch.tensor of a size,
compiles into one engine and matches eager, with static and with dynamic shapes.
"""

import pytest
import torch
from torch.testing import FileCheck

import torch_trt
from torch_trt.errors import Code
from torch_trt.lowering.passes.traced_sizes import fold_traced_sizes

from graph_checks import assert_ops


def _kv_range(x):
    """llama's mask: kv_length is the query length plus past tokens (a traced tensor constant 0), read as a Scalar."""
    kv_length = x.size(1) + torch.tensor(0)
    return x * torch.arange(kv_length, device=x.device)


def _positions(x):
    """Positions counted from one: arange(1, size + 1)."""
    return x + torch.arange(1, x.size(1) + 1, device=x.device)


def _last_half(x):
    """A slice from the end: the negated size is read back as an int."""
    return x[:, -(x.size(1) // 2):] * 2


def _clip_to_half_width(x):
    """A size as hardtanh's max_val, a Scalar argument (static shapes only: hardtanh takes its bounds at build)."""
    return torch.nn.functional.hardtanh(x * 4, 0.0, x.size(1) // 2)


TRACED = [  # id, function, what the folded graph shows in order
    ("arange_end_from_size_plus_tensor_constant", _kv_range, ["int = aten::add", "aten::arange"]),
    ("arange_start_end_from_size", _positions, ["int = aten::add", "aten::arange"]),
    ("slice_from_negated_size", _last_half, ["int = aten::floordiv", "int = aten::neg", "aten::slice"]),
    ("scalar_argument_from_size", _clip_to_half_width, ["int = aten::floordiv", "aten::hardtanh"]),
]


def _with_data_read(function):
    """`function` plus torch.full_like(x, x.sum()): a Scalar read of tensor data, which must stay a read."""
    return lambda x: (function(x), torch.full_like(x, x.sum()))


@pytest.mark.parametrize("name,function,folded", TRACED, ids=[c[0] for c in TRACED])
def test_traced_size_reads_become_int_arithmetic(name, function, folded):
    case = _with_data_read(function)
    graph = torch.jit.trace(case, torch.randn(2, 6)).graph.copy()
    torch._C._jit_pass_constant_propagation(graph)  # as torch.jit.freeze does: torch.tensor(0) is a constant
    FileCheck().check("prim::NumToTensor").run(graph)
    fold_traced_sizes(graph)
    check = FileCheck().check_not("prim::NumToTensor").check_not("aten::Int(")
    for op in folded:
        check = check.check(op)
    check.run(graph)
    FileCheck().check("aten::sum").check_count("aten::ScalarImplicit", 1, exactly=True).run(graph)
    x = torch.randn(3, 8)
    for actual, expected in zip(torch._C._create_function_from_graph(name, graph)(x), case(x)):
        torch.testing.assert_close(actual, expected)


IR = [  # id, graph before, what it shows after in order, what is gone
    ("float_of_size_product", """graph(%x : Tensor):
        %one : int = prim::Constant[value=1]()
        %two : int = prim::Constant[value=2]()
        %size : int = aten::size(%x, %one)
        %n : Tensor = prim::NumToTensor(%size)
        %m : Tensor = aten::mul(%n, %two)
        %f : float = aten::Float(%m)
        return (%f)""", ["int = aten::mul", "float = aten::Float(%"], ["prim::NumToTensor", "Tensor = aten::mul"]),
    ("scalar_of_negated_size", """graph(%x : Tensor):
        %one : int = prim::Constant[value=1]()
        %size : int = aten::size(%x, %one)
        %n : Tensor = prim::NumToTensor(%size)
        %m : Tensor = aten::neg(%n)
        %s : Scalar = aten::ScalarImplicit(%m)
        %y : Tensor = aten::add(%x, %s, %one)
        return (%y)""", ["int = aten::neg", "aten::add(%x"], ["prim::NumToTensor", "aten::ScalarImplicit"]),
    ("size_plus_data_is_kept", """graph(%x : Tensor):
        %one : int = prim::Constant[value=1]()
        %none : NoneType = prim::Constant()
        %size : int = aten::size(%x, %one)
        %n : Tensor = prim::NumToTensor(%size)
        %data : Tensor = aten::sum(%x, %none)
        %m : Tensor = aten::add(%n, %data, %one)
        %s : Scalar = aten::ScalarImplicit(%m)
        %k : Tensor = aten::neg(%n)
        %f : float = aten::Float(%k)
        %out : (Scalar, float) = prim::TupleConstruct(%s, %f)
        return (%out)""", ["aten::ScalarImplicit", "int = aten::neg", "aten::Float(%"], ["aten::Float(%k)"]),
]


@pytest.mark.parametrize("name,before,present,absent", IR, ids=[c[0] for c in IR])
def test_reads_of_size_tensors(name, before, present, absent):
    graph, x = torch._C.parse_ir(before), torch.randn(2, 5)
    expected = torch._C._create_function_from_graph(f"{name}_before", graph.copy())(x)
    fold_traced_sizes(graph)
    torch._C._jit_pass_lint(graph)
    assert_ops(graph, present, absent)
    torch.testing.assert_close(torch._C._create_function_from_graph(name, graph)(x), expected)


@torch.jit.script
def _scaled_size_sqrt(query_layer: torch.Tensor, scale_factor: int):
    """transformers' DeBERTa-v2 (scripted, so a trace records torch.tensor of the traced size)."""
    return torch.sqrt(torch.tensor(query_layer.size(-1), dtype=torch.float) * scale_factor)


def _deberta_scale(x):
    return x / _scaled_size_sqrt(x, 2)


class _Traced(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, x):
        return self.function(x)


MODELS = [(name, function) for name, function, _ in TRACED] + [("deberta_tensor_of_size", _deberta_scale)]
DYNAMIC = torch_trt.Input(min_shape=(1, 2), opt_shape=(2, 6), max_shape=(4, 16), dtype=torch.float32)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name,function", MODELS, ids=[m[0] for m in MODELS])
def test_traced_size_patterns_compile_to_one_engine(name, function, dynamic, device):
    if dynamic and function is _clip_to_half_width:
        pytest.skip("hardtanh takes its bounds at build; a dynamic size as max_val runs in PyTorch")
    example = torch.randn(2, 6, device=device)
    compiled = torch_trt.compile(torch.jit.trace(_Traced(function), example), inputs=[DYNAMIC if dynamic else example],
                                 target="reference", device=device, require_full_compilation=True, min_block_size=1)
    assert str(compiled.graph).count("torch_trt::execute_engine") == 1, compiled.graph
    for shape in [(3, 10), (1, 2)] if dynamic else [(2, 6)]:
        x = torch.randn(shape, device=device)
        torch.testing.assert_close(compiled(x), function(x))


def test_scalar_read_of_tensor_data_runs_in_pytorch():
    """The size read folds into the engine; the Scalar read of x.sum() (and full_like, which takes it) stays in
    PyTorch and follows the data."""
    case = _with_data_read(_kv_range)
    module = torch.jit.trace(_Traced(case), torch.randn(2, 6))
    report = torch_trt.explain(module, [torch.randn(2, 6)], target="reference", min_block_size=1)
    assert sorted((d.split(" ")[0], r.code) for d, r in report.fallbacks) == [
        ("aten::ScalarImplicit", Code.DATA_DEPENDENT), ("aten::full_like", Code.NON_TENSOR)]
    compiled = torch_trt.compile(module, inputs=[torch.randn(2, 6)], target="reference", min_block_size=1)
    for x in (torch.randn(2, 6), torch.randn(2, 6) + 5):
        for actual, expected in zip(compiled(x), case(x)):
            torch.testing.assert_close(actual, expected)


@torch.jit.script
def _tensor_of_data(x: torch.Tensor):
    return x * torch.tensor(int(x.sum()))


@torch.jit.script
def _tensor_requiring_grad(x: torch.Tensor):
    return x * torch.tensor(x.size(0), dtype=torch.float, requires_grad=True)


@pytest.mark.parametrize("function,reason", [(_tensor_of_data, Code.NON_TENSOR),
                                             (_tensor_requiring_grad, Code.UNSUPPORTED_ARGUMENTS)],
                         ids=["data_read", "requires_grad"])
def test_tensor_of_data_or_requiring_grad_runs_in_pytorch(function, reason):
    """torch.tensor of an int read from tensor data, or requiring grad, is made by PyTorch."""
    module = torch.jit.script(_Traced(function))
    report = torch_trt.explain(module, [torch.randn(2, 6)], target="reference", min_block_size=1)
    assert ("aten::tensor", reason) in [(d.split(" ")[0], r.code) for d, r in report.fallbacks]
    compiled = torch_trt.compile(module, inputs=[torch.randn(2, 6)], target="reference", min_block_size=1)
    with torch.no_grad():  # the tensor requiring grad enters an engine, which computes no gradients
        for x in (torch.randn(2, 6), torch.randn(2, 6) + 5):
            torch.testing.assert_close(compiled(x), function(x))
