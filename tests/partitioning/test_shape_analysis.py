"""Shape analysis: min/opt/max shapes and dtypes of every tensor, data-dependent shapes, invalid random data."""

import pytest
import torch

from torch_trt import Input
from torch_trt.errors import TorchTRTError
from torch_trt.partitioning import shape_analysis
from torch_trt.partitioning.shape_analysis import analyze


CONSTANTS = """
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()"""


def _analyze(body, specs, inputs="%x : Tensor", examples=None, device="cpu"):
    """Analyze the IR graph `body`; infos keyed by the kind of the node producing each value."""
    graph = torch._C.parse_ir(f"graph({inputs}):{CONSTANTS}{body}")
    infos = analyze(graph, specs, device, examples)
    return {value.node().kind(): info for value, info in infos.items()}  # parse_ir drops value names


def test_dynamic_input_gives_min_opt_max_and_dtype():
    infos = _analyze("""
  %y : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %n : int = aten::size(%y, %zero)
  %d : int = aten::dim(%y)
  return (%y, %n, %d)""", [Input(min_shape=(1, 4), opt_shape=(3, 4), max_shape=(8, 4), dtype=torch.int32)])
    y = infos["torch_trt_test::opaque"]
    assert (y.min_shape, y.opt_shape, y.max_shape, y.dtype) == ((1, 4), (3, 4), (8, 4), torch.int64)
    assert y.spec(torch.int32) == Input(min_shape=(1, 4), opt_shape=(3, 4), max_shape=(8, 4), dtype=torch.int32)
    assert y.describe() == "(1..8, 4):int64" and not y.problem
    assert not infos["aten::size"].constant  # the size of a dynamic dim is not a build-time value
    assert infos["aten::dim"].constant


@pytest.mark.parametrize("device", ["cpu", "cuda"])  # on data, and on meta tensors (no GPU needed)
def test_a_size_of_two_dynamic_dims_takes_its_range_from_the_corners(device):
    """x[:, y.size(1):] is 6 wide at min (7 - 1) and at max (13 - 7): its range comes from the runs with one input at
    min and the other at max (7 - 7 and 13 - 1). An engine taking it was built for 6 only and refused 12 columns."""
    infos = _analyze("""
  %w : int = aten::size(%y, %one)
  %end : int = prim::Constant[value=9223372036854775807]()
  %rest : Tensor = aten::slice(%x, %one, %w, %end, %one)
  %n : int = aten::size(%rest, %one)
  return (%rest, %n)""", [Input(min_shape=(1, 7), opt_shape=(1, 10), max_shape=(1, 13)),
                          Input(min_shape=(1, 1), opt_shape=(1, 4), max_shape=(1, 7))],
        inputs="%x : Tensor, %y : Tensor", device=device)
    rest = infos["aten::slice"]
    assert (rest.min_shape, rest.max_shape) == ((1, 0), (1, 12)) and "empty" in rest.problem
    assert not infos["aten::size"].constant


def test_corners_that_the_model_rejects_are_skipped():
    """Two inputs whose dynamic dims must be equal: the corners' shapes do not broadcast, and the runs at min, opt and
    max still give the ranges."""
    infos = _analyze("""
  %z : Tensor = aten::add(%x, %y, %one)
  return (%z)""", [Input(min_shape=(2, 3), opt_shape=(4, 3), max_shape=(8, 3))] * 2, inputs="%x : Tensor, %y : Tensor")
    z = infos["aten::add"]
    assert (z.min_shape, z.opt_shape, z.max_shape) == ((2, 3), (4, 3), (8, 3)) and not z.problem


def test_data_dependent_shape_is_a_problem():
    infos = _analyze("""
  %p : Tensor = aten::gt(%x, %zero)
  %i : Tensor = aten::nonzero(%p)
  return (%i)""", [Input((6, 5))])
    assert "data-dependent" in infos["aten::nonzero"].problem


def test_random_data_the_model_rejects_falls_back_to_ones():
    infos = _analyze("""
  %q : Tensor = aten::floor_divide(%x, %b)
  return (%q)""", [Input((40,), dtype=torch.int32)] * 2, inputs="%x : Tensor, %b : Tensor")
    assert infos["aten::floor_divide"].opt_shape == (40,)


def test_given_examples_run_first_on_copies():
    examples = [torch.arange(1, 6, dtype=torch.int32)]
    infos = _analyze("""
  %s : Tensor = aten::sum(%x, %none)
  %n : int = aten::Int(%s)
  %w : Tensor = aten::add_(%x, %one, %one)
  return (%n, %w)""", [Input((5,), dtype=torch.int32)], examples=examples)
    assert infos["aten::Int"].values[0] == 15
    assert examples[0].tolist() == [1, 2, 3, 4, 5]


def test_a_model_no_data_suits_names_the_run():
    with pytest.raises(TorchTRTError, match="opt-shape example inputs"):
        _analyze("""
  %shape : int[] = prim::Constant[value=[7]]()
  %y : Tensor = aten::view(%x, %shape)
  return (%y)""", [Input((3,))])


def test_shapes_for_a_cuda_engine_come_from_meta_tensors_where_no_op_needs_data():
    """An example of this opt shape would take 4 TiB: for a CUDA device, a graph whose ops need no data runs on meta
    tensors, which allocate nothing (no GPU is needed: nothing runs on it)."""
    infos = _analyze("""
  %y : Tensor = aten::relu(%x)
  %n : int = aten::size(%y, %zero)
  return (%y, %n)""", [Input((1 << 20, 1 << 20))], device="cuda")
    assert infos["aten::relu"].opt_shape == (1 << 20, 1 << 20) and infos["aten::size"].values == (1 << 20,)


def test_a_traced_convolution_for_a_cuda_engine_runs_on_meta_tensors():
    """torch.jit.trace records aten::_convolution, which has no meta kernel in PyTorch's CUDA builds; a ResNet-50's
    analysis then ran on the GPU and held more than eager's activations. This opt shape would take 8 TiB on data."""
    infos = _analyze("""
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %s : int[] = prim::ListConstruct(%one, %one)
  %p : int[] = prim::ListConstruct(%zero, %zero)
  %y : Tensor = aten::_convolution(%x, %w, %none, %s, %p, %s, %f, %p, %one, %f, %f, %t, %t)
  return (%y)""", [Input((1 << 20, 3, 1 << 10, 1 << 10)), Input((8, 3, 1, 1))], "%x : Tensor, %w : Tensor",
                     device="cuda")
    assert infos["aten::_convolution"].opt_shape == (1 << 20, 8, 1 << 10, 1 << 10)


def test_a_graph_asking_where_a_tensor_is_runs_on_data(monkeypatch):
    """On meta tensors `x.is_cpu` would be False, and a branch on it (MultiheadAttention's fast-path check reads
    str(x.device)) could take another path than the engine's device does."""
    monkeypatch.setattr(shape_analysis, "_is_cuda", lambda device: True)  # meta runs are tried for CUDA engines
    infos = _analyze("""
  %c : bool = prim::is_cpu(%x)
  return (%c)""", [Input((2,))])
    assert infos["prim::is_cpu"].values[0] is True
