import pytest
import torch

import torch_trt


@pytest.mark.parametrize("kwargs,message", [
    ({"min_shape": (4, 3), "opt_shape": (2, 3), "max_shape": (8, 3)}, "min <= opt <= max"),
    ({"min_shape": (1, 3), "opt_shape": (2, 3), "max_shape": (8, 3, 1)}, "same rank"),
    ({"shape": (0, 3)}, "positive"),
    ({"shape": (2, -1)}, "positive"),
    ({"shape": (2, 3), "dtype": torch.complex64}, "unsupported dtype"),
    ({"shape": (2, 3), "min_shape": (1, 3)}, "not both"),
    ({"min_shape": (1, 3), "max_shape": (2, 3)}, "needs all of"),
    ({"shape": "2x3"}, "tuple of ints"),
])
def test_invalid_input_specs(kwargs, message):
    with pytest.raises(ValueError, match=message):
        torch_trt.Input(**kwargs)


def test_dynamic_input_shape():
    spec = torch_trt.Input(min_shape=(1, 128), opt_shape=(8, 128), max_shape=(32, 128), dtype=torch.int32)
    assert spec.is_dynamic and spec.shape == (-1, 128)
    assert spec.example("max").shape == (32, 128) and spec.example().dtype == torch.int32


def test_unknown_option_lists_valid_names():
    with pytest.raises(TypeError, match="min_block_size"):
        torch_trt.CompileSettings.from_options({"min_blok_size": 3})


def test_compile_rejects_unknown_option():
    with pytest.raises(TypeError, match="unknown torch_trt option"):
        torch_trt.compile(torch.nn.ReLU(), inputs=[torch.randn(2)], precision="fp16")


@pytest.mark.parametrize("options,message", [
    ({"enabled_precisions": {torch.int8}}, "enabled_precisions"),
    ({"min_block_size": 0}, "min_block_size"),
    ({"target": "onnx"}, "target"),
])
def test_invalid_settings(options, message):
    with pytest.raises(ValueError, match=message):
        torch_trt.CompileSettings.from_options(options)


def test_engines_run_where_the_module_is_when_only_specs_are_given():
    from torch_trt.backend.torchscript import prepare

    _, _, _, device, examples = prepare(torch.nn.Linear(4, 2), [torch_trt.Input((3, 4))], {"target": "reference"})
    assert device == torch.device("cpu") and examples[0].device == device
