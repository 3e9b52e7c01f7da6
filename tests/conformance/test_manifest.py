"""The checker reads the manifest as TensorRT's bindings behave: overloads, defaults, placeholders, bases,
shadowing, read-only and write-only attributes, enum aliases and the quirks the manifest lists."""

import pytest

from conformance.manifest import Manifest
from conformance.recorder import Recorder, violations

MANIFEST = Manifest()
OK = None

# (check, arguments, expected: None when valid, else a part of the message)
CASES = {
    "call_positional": ("call", ("INetworkDefinition", "add_activation", 2, ()), OK),
    "call_keywords": ("call", ("INetworkDefinition", "add_activation", 0, ("input", "type")), OK),
    "call_misspelled_keyword": ("call", ("INetworkDefinition", "add_activation", 1, ("kind",)), "no parameter named"),
    "call_missing_argument": ("call", ("INetworkDefinition", "add_activation", 1, ()), "missing type"),
    "call_too_many": ("call", ("INetworkDefinition", "add_shuffle", 2, ()), "at most 1"),
    "call_twice": ("call", ("INetworkDefinition", "add_shuffle", 1, ("input",)), "positionally and by keyword"),
    "call_unknown_method": ("call", ("INetworkDefinition", "add_fully_connected", 4, ()), "does not exist"),
    "default_used": ("call", ("INetworkDefinition", "add_convolution_nd", 4, ()), OK),
    "overload_longer": ("call", ("Builder", "build_serialized_network", 3, ()), OK),
    "overload_by_keyword": ("call", ("ICudaEngine", "create_execution_context", 0, ("runtime_config",)), OK),
    "scale_nd_channel_axis_required": ("call", ("INetworkDefinition", "add_scale_nd", 5, ()), "missing channel_axis"),
    "scale_nd_channel_axis_keyword": ("call", ("INetworkDefinition", "add_scale_nd", 2, ("channel_axis",)), OK),
    "normalization_camel_case": ("call", ("INetworkDefinition", "add_normalization", 3, ("axesMask",)), OK),
    "normalization_snake_case": ("call", ("INetworkDefinition", "add_normalization", 3, ("axes_mask",)), "axes_mask"),
    "placeholder_positional": ("call", ("ICudaEngine", "serialize_with_config", 1, ()), OK),
    "placeholder_keyword": ("call", ("ICudaEngine", "serialize_with_config", 0, ("arg0",)), "positional-only"),
    "swapped_keywords": ("call", ("ICudaEngine", "get_tensor_profile_values", 0, ("name", "profile_index")),
                         "pass the arguments positionally"),
    "swapped_positional": ("call", ("ICudaEngine", "get_tensor_profile_values", 2, ()), OK),
    "base_class_method": ("call", ("IShuffleLayer", "get_output", 1, ()), OK),
    "removed_in_11": ("call", ("IConvolutionLayer", "set_output_type", 2, ()), "does not exist"),
    "constructor": ("call", ("Builder", "__init__", 1, ()), OK),
    "constructor_keyword": ("call", ("Logger", "__init__", 0, ("min_severity",)), OK),
    "enum_lookup": ("call", ("DataType", "__init__", 1, ()), OK),
    "module_function": ("call", ("<module>", "volume", 1, ()), OK),
    "special_method": ("call", ("INetworkDefinition", "__getitem__", 1, ()), OK),
    "no_len_on_host_memory": ("call", ("IHostMemory", "__len__", 0, ()), "does not exist"),
    "activation_type_writable": ("set", ("IActivationLayer", "type"), OK),
    "layer_type_read_only": ("set", ("IConvolutionLayer", "type"), "read-only"),
    "tensor_dtype_read_only": ("set", ("ITensor", "dtype"), "read-only"),
    "tensor_dynamic_range_gone": ("set", ("ITensor", "dynamic_range"), "does not exist"),
    "layer_name_from_base": ("set", ("IPoolingLayer", "name"), OK),
    "write_only_read": ("get", ("Builder", "gpu_allocator"), "write-only"),
    "documented_not_bound": ("get", ("ITensor", "is_shape"), "does not exist"),
    "logger_base_has_no_min_severity": ("get", ("ILogger", "min_severity"), "does not exist"),
    "logger_class_attribute": ("get", ("ILogger", "ERROR"), OK),
    "method_is_not_an_attribute": ("set", ("INetworkDefinition", "mark_output"), "not a writable attribute"),
    "enum_member": ("enum", ("BuilderFlag", "TF32"), OK),
    "enum_member_removed": ("enum", ("BuilderFlag", "FP16"), "not a member"),
    "enum_alias": ("enum", ("Logger.Severity", "ERROR"), OK),
    "module_alias": ("module", ("bfloat16",), OK),
    "module_version": ("module", ("__version__",), OK),
    "module_removed_class": ("module", ("IInt8Calibrator",), "does not exist"),
}
CHECKS = {"call": MANIFEST.check_call, "set": lambda o, n: MANIFEST.check_attribute(o, n, "set"),
          "get": lambda o, n: MANIFEST.check_attribute(o, n, "get"), "enum": MANIFEST.check_enum_member,
          "module": MANIFEST.check_module_name}


@pytest.mark.parametrize("check, arguments, expected", CASES.values(), ids=CASES.keys())
def test_manifest_check(check, arguments, expected):
    problem = CHECKS[check](*arguments)
    assert problem == expected if expected is None else expected in (problem or "")


@pytest.mark.parametrize("key, message", [
    (("call", "INetworkDefinition", "add_normalization_v2", 4, ()), "INetworkDefinition.add_normalization_v2 was added"),
    (("call", "INetworkDefinition", "add_topk", 5, ()), "this form of INetworkDefinition.add_topk(_, _, _, _, _)"),
    (("set", "ITopKLayer", "indices_type"), "ITopKLayer.indices_type was added"),
    (("enum", "LayerType", "ROTARY_EMBEDDING"), "LayerType.ROTARY_EMBEDDING was added"),
    (("module", "IRotaryEmbeddingLayer"), "tensorrt.IRotaryEmbeddingLayer was added"),
])
def test_api_added_after_the_minimum_version_fails_the_check(key, message):
    """Valid on the manifest's 11.4, but missing from a TensorRT torch_trt says it supports (10.3 and up)."""
    recorder = Recorder()
    recorder.record(*key)
    (found,) = violations(recorder, Manifest())
    assert message in found[0] and "torch_trt supports TensorRT 10.3 and up" in found[0], found[0]


@pytest.mark.parametrize("key", [
    ("call", "INetworkDefinition", "add_topk", 4, ()),
    ("call", "INetworkDefinition", "add_normalization", 4, ()),
    ("set", "ISliceLayer", "axes"),
    ("enum", "LayerType", "SLICE"),
])
def test_api_of_the_minimum_version_passes_the_check(key):
    recorder = Recorder()
    recorder.record(*key)
    assert not violations(recorder, Manifest())
