"""converter_table: a family registered from one table feeding one builder; each row's converter is named after its
schema and belongs to the module holding the table, so errors and tracebacks point there."""

import pytest

from torch_trt.conversion import registry


def test_every_converter_belongs_to_its_family_module():
    modules = {registration.function.__module__ for registration in registry.CONVERTERS.values()}
    assert all(module.startswith("torch_trt.converters.") for module in modules), sorted(modules)


@pytest.mark.parametrize("key, module, name", [
    (("aten::sum", "dim_IntList"), "reduce", "sum_dim_IntList"),
    (("aten::std", "correction"), "reduce", "std_correction"),
    (("aten::log_softmax", "int"), "softmax", "log_softmax_int"),
    (("aten::floor_divide", ""), "elementwise", "floor_divide"),
    (("aten::upsample_bilinear2d", "vec"), "resize", "upsample_bilinear2d_vec"),
    (("aten::reciprocal", ""), "unary", "reciprocal"),
    (("aten::relu", ""), "activation", "relu"),
])
def test_table_rows_are_named_after_their_schema(key, module, name):
    function = registry.CONVERTERS[key].function
    assert (function.__module__, function.__name__) == (f"torch_trt.converters.{module}", name)


def test_a_duplicate_row_names_the_converter_it_collides_with():
    with pytest.raises(ValueError, match=r"duplicate converter for \('aten::exp', ''\): torch_trt\.converters\.unary"
                                         r"\.exp is already registered"):
        registry.converter_table({"aten::exp(Tensor self) -> Tensor": "EXP"}, lambda ctx, node, args, op: None, "{}")


def test_each_row_passes_its_value_to_the_builder_and_documents_it(monkeypatch):
    monkeypatch.setattr(registry, "CONVERTERS", {})
    registry.converter_table({"aten::relu(Tensor self) -> Tensor": "RELU", "aten::tanh(Tensor self) -> Tensor": "TANH"},
                             lambda ctx, node, args, kind: (node, kind), "ActivationType.{}.")
    relu, tanh = (registry.CONVERTERS[(name, "")].function for name in ("aten::relu", "aten::tanh"))
    assert relu("ctx", "node", "args") == ("node", "RELU") and tanh("ctx", "node", "args") == ("node", "TANH")
    assert (tanh.__name__, tanh.__module__, tanh.__doc__) == ("tanh", __name__, "ActivationType.TANH.")
