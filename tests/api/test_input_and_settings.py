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


@pytest.mark.parametrize("options,error,message", [
    ({"enabled_precisions": torch.float16}, TypeError, r"enabled_precisions must be a set of dtypes"),
    ({"enabled_precisions": {"fp16"}}, ValueError, r"enabled_precisions: unsupported \['fp16'\]"),
    ({"min_block_size": "3"}, TypeError, r"min_block_size must be an int >= 1, got '3'"),
    ({"min_block_size": 2.0}, TypeError, r"min_block_size must be an int"),
    ({"debug": "no"}, TypeError, r"debug must be True or False, got 'no'"),
    ({"require_full_compilation": 1}, TypeError, r"require_full_compilation must be True or False"),
    ({"truncate_long_and_double": None}, TypeError, r"truncate_long_and_double must be True or False"),
    ({"pass_through_build_failures": "yes"}, TypeError, r"pass_through_build_failures must be True or False"),
    ({"allow_traced_control_flow": 1}, TypeError, r"allow_traced_control_flow must be True or False"),
    ({"torch_executed_ops": "aten::relu"}, TypeError, r"torch_executed_ops must be a set of operator names"),
    ({"torch_executed_ops": {"aten::rleu"}}, ValueError, r"torch_executed_ops: 'aten::rleu' is not an operator"),
    ({"torch_executed_ops": {"relu"}}, ValueError, r"torch_executed_ops: 'relu' is not an operator"),
    ({"torch_executed_ops": {"aten::add.Tensr"}}, ValueError, r"'aten::add.Tensr' is not an operator"),
    ({"torch_executed_ops": {torch.relu}}, TypeError, r"torch_executed_ops entries must be operator names"),
    ({"optimization_level": 6}, ValueError, r"optimization_level must be from 0 to 5, got 6"),
    ({"optimization_level": "3"}, TypeError, r"optimization_level must be an int"),
    ({"workspace_size": 1.5e9}, TypeError, r"workspace_size must be a number of bytes"),
    ({"workspace_size": 0}, ValueError, r"workspace_size must be a positive number of bytes"),
    ({"dynamic_shape_max": True}, TypeError, r"dynamic_shape_max must be a positive int or None"),
    ({"dynamic_shape_max": "64"}, TypeError, r"dynamic_shape_max must be a positive int or None"),
    ({"device": "gpu"}, ValueError, r"device: .*use 'auto', 'cpu', 'cuda' or 'cuda:<index>'"),
    ({"device": 0}, TypeError, r"device must be 'auto', a device string"),
    ({"device": "meta"}, ValueError, r"device is meta, but engines run on the CPU or a CUDA device"),
    ({"device": torch.device("meta")}, ValueError, r"device is meta, but engines run on the CPU or a CUDA device"),
    ({"target": None}, ValueError, r"target must be 'auto', 'tensorrt' or 'reference', got None"),
])
def test_option_of_the_wrong_type_or_value_names_the_option(options, error, message):
    with pytest.raises(error, match=message):
        torch_trt.CompileSettings.from_options(options)


def test_valid_option_forms_are_accepted():
    settings = torch_trt.CompileSettings.from_options({
        "enabled_precisions": [torch.float32, torch.float16],
        "torch_executed_ops": ["aten::relu", "aten::add.Tensor", "aten::matmul"],
        "device": torch.device("cpu"),
        "dynamic_shape_max": 64,
    })
    assert settings.enabled_precisions == {torch.float32, torch.float16}
    assert settings.torch_executed_ops == {"aten::relu", "aten::add.Tensor", "aten::matmul"}


def test_example_inputs_on_a_device_engines_do_not_run_on_are_refused_by_name():
    with pytest.raises(ValueError, match="the example inputs' device is meta, but engines run on the CPU or a CUDA"):
        torch_trt.compile(torch.nn.Linear(8, 8).eval(), inputs=[torch.randn(2, 8, device="meta")])


def test_compile_checks_option_types_before_any_work():
    with pytest.raises(TypeError, match="enabled_precisions must be a set of dtypes"):
        torch_trt.compile(torch.nn.ReLU(), inputs=[torch.randn(2)], enabled_precisions=torch.float16)
