import pytest
import torch

from torch_trt.conversion import registry


def test_duplicate_converter_is_an_error():
    with pytest.raises(ValueError, match="duplicate converter"):
        registry.converter("aten::relu(Tensor self) -> Tensor")(lambda ctx, node, args: None)


def test_unparseable_schema_is_an_error():
    with pytest.raises(ValueError, match="cannot parse schema"):
        registry.converter("aten::relu(Tensor self -> Tensor")


def test_lookup_by_node_schema_overload():
    graph = torch._C.parse_ir("""graph(%x : Tensor, %y : Tensor):
        %one : int = prim::Constant[value=1]()
        %z : Tensor = aten::add(%x, %y, %one)
        return (%z)""")
    add = [n for n in graph.nodes() if n.kind() == "aten::add"][0]
    registration = registry.find_converter(add)
    assert registration.schema.overload_name == "Tensor"
    assert registry.find_converter([n for n in graph.nodes() if n.kind() == "prim::Constant"][0]) is None
