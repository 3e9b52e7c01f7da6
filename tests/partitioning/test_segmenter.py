"""Segmenter cases as small IR graphs: the segments, their ops in execution order, and a valid graph after."""

import pytest
import torch

from torch_trt import CompileSettings, Input
from torch_trt.partitioning import partition

HEADER = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
"""

RESHAPE_BY_A_SIZE = """
  %t : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %n : int = aten::size(%t, %zero)
  %m : int = aten::mul(%n, %one)
  %minus : int = prim::Constant[value=-1]()
  %shape : int[] = prim::ListConstruct(%m, %minus)
  %v : Tensor = aten::relu(%t)
  %r : Tensor = aten::reshape(%v, %shape)
  return (%r, %m)"""  # reads the size of an input the engine may not receive

CASES = [  # id, IR body, expected [(kind, ops)], settings
    ("independent_blocks_join", """
  %a : Tensor = aten::relu(%x)
  %t : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %b : Tensor = aten::sigmoid(%a)
  %u : Tensor = torch_trt_test::opaque(%b, %zero, %none)
  return (%u, %t)""", [("E", ["aten::relu", "aten::sigmoid"]), ("T", ["torch_trt_test::opaque", "torch_trt_test::opaque"])], {}),
    ("tensor_list_is_rebuilt_in_the_engine", """
  %t : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %a : Tensor = aten::relu(%x)
  %pair : Tensor[] = prim::ListConstruct(%a, %t)
  %c : Tensor = aten::cat(%pair, %zero)
  return (%c, %pair)""", [("T", ["torch_trt_test::opaque"]), ("E", ["aten::relu", "prim::ListConstruct", "aten::cat"])], {}),
    ("int64_in_a_tensor_list_enters_the_engine", """
  %long : int = prim::Constant[value=4]()
  %i : Tensor = torch_trt_test::opaque(%x, %zero, %long)
  %a : Tensor = aten::relu(%i)
  %b : Tensor = aten::abs(%i)
  %pair : Tensor[] = prim::ListConstruct(%a, %i)
  %c : Tensor = aten::cat(%pair, %zero)
  return (%c, %b)""", [("T", ["torch_trt_test::opaque"]), ("E", ["aten::relu", "aten::abs", "prim::ListConstruct",
                                                                   "aten::cat"])], {}),
    ("nothing_moves_across_a_write", """
  %a : Tensor = aten::relu(%x)
  %t : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %w : Tensor = aten::add_(%x, %one, %one)
  %b : Tensor = aten::sigmoid(%x)
  %c : Tensor = aten::add(%b, %a, %one)
  return (%c, %t)""", [("E", ["aten::relu"]), ("T", ["torch_trt_test::opaque", "aten::add_"]),
                       ("E", ["aten::sigmoid", "aten::add"])], {}),
    ("int_read_from_data_stays_in_pytorch", """
  %s : Tensor = aten::sum(%x, %none)
  %i : int = aten::Int(%s)
  %y : Tensor = aten::mul(%x, %i)
  return (%y)""", [("E", ["aten::sum"]), ("T", ["aten::Int", "aten::mul"])], {}),
    # static: the size of %t, which the engine does not receive, is a constant
    ("static_values_are_evaluated_in_the_engine", RESHAPE_BY_A_SIZE,
     [("T", ["torch_trt_test::opaque"]), ("E", ["aten::relu", "aten::mul", "prim::ListConstruct", "aten::reshape"])],
     {}),
    ("small_block_between_pytorch_ops", """
  %t : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %a : Tensor = aten::relu(%t)
  %u : Tensor = torch_trt_test::opaque(%a, %zero, %none)
  return (%u)""", [("T", ["torch_trt_test::opaque", "aten::relu", "torch_trt_test::opaque"])], {"min_block_size": 2}),
]


@pytest.mark.parametrize("name,body,expected,settings", CASES, ids=[c[0] for c in CASES])
def test_segments(name, body, expected, settings):
    graph = torch._C.parse_ir(HEADER + body)
    settings = CompileSettings(**{"target": "reference", "min_block_size": 1, **settings})
    result = partition(graph, settings, [Input((4, 3))], "cpu")
    got = [(s.kind.value[0].upper(), [n.kind() for n in s.nodes]) for s in result.segments]
    assert got == expected, str(result.report)
    torch._C._jit_pass_lint(graph)
    _assert_contiguous(graph, result.segments)


def _assert_contiguous(graph, segments):
    """Each engine segment's nodes follow one another in the graph, as stitching needs."""
    order = {node: index for index, node in enumerate(graph.nodes())}
    for segment in [s for s in segments if s.kind.value == "engine"]:
        positions = [order[node] for node in segment.nodes]
        assert positions == list(range(positions[0], positions[0] + len(positions)))


DYNAMIC_ROWS = Input(min_shape=(1, 3), opt_shape=(4, 3), max_shape=(8, 3))
DYNAMIC_CASES = [  # id, IR body, expected [(kind, ops)], the producers of the engine's inputs
    ("dynamic_size_is_computed_in_the_engine", RESHAPE_BY_A_SIZE,
     [("T", ["torch_trt_test::opaque"]),
      ("E", ["aten::relu", "aten::size", "aten::mul", "prim::ListConstruct", "aten::reshape"])],
     ["torch_trt_test::opaque"]),
    ("tensor_read_for_its_dynamic_size_enters_the_engine", """
  %t : Tensor = torch_trt_test::opaque(%x, %zero, %none)
  %n : int = aten::size(%t, %zero)
  %minus : int = prim::Constant[value=-1]()
  %shape : int[] = prim::ListConstruct(%n, %minus)
  %v : Tensor = aten::relu(%x)
  %r : Tensor = aten::reshape(%v, %shape)
  return (%r, %t)""", [("T", ["torch_trt_test::opaque"]),
                       ("E", ["aten::relu", "aten::size", "prim::ListConstruct", "aten::reshape"])],
     ["prim::Param", "torch_trt_test::opaque"]),
]


@pytest.mark.parametrize("name,body,expected,inputs", DYNAMIC_CASES, ids=[c[0] for c in DYNAMIC_CASES])
def test_dynamic_sizes_are_rebuilt_in_engines(name, body, expected, inputs):
    """Sizes of dynamic dims and int arithmetic on them run inside the engine reading them, not at its boundary."""
    graph = torch._C.parse_ir(HEADER + body)
    result = partition(graph, CompileSettings(target="reference", min_block_size=1), [DYNAMIC_ROWS], "cpu")
    got = [(s.kind.value[0].upper(), [n.kind() for n in s.nodes]) for s in result.segments]
    assert got == expected, str(result.report)
    assert [v.node().kind() for v in result.segments[-1].inputs] == inputs
    torch._C._jit_pass_lint(graph)
    _assert_contiguous(graph, result.segments)
