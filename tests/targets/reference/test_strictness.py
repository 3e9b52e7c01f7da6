"""The reference refuses what TensorRT refuses: one minimal violating network per rule.

"add" rules are refused by the add_* call (it logs an error and returns None, as TensorRT does);
"build" rules concern attributes set after add_* or the network as a whole, so the network
accepts them and build_serialized_network refuses (logs and returns None).
"""

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt

F32, F16, I32, I64, BOOL = trt.float32, trt.float16, trt.int32, trt.int64, trt.bool
I8, U8 = trt.int8, trt.uint8
E, A, U, R = trt.ElementWiseOperation, trt.ActivationType, trt.UnaryOperation, trt.ReduceOperation
M = trt.MatrixOperation.NONE


def _const(net, array):
    return net.add_constant(array.shape, array).get_output(0)


def _set(layer, **attributes):
    """Set attributes after add_*, as converters do; pass a refused (None) layer through."""
    for name, value in attributes.items():
        setattr(layer, name, value)
    return layer


def _conv(net, x, maps, kernel_shape, in_channels, **attributes):
    kernel = np.ones((maps, in_channels, *kernel_shape), np.float32)
    return _set(net.add_convolution_nd(x, maps, kernel_shape, kernel), **attributes)


def _from_other_network(net, x):
    other = trt.Builder(trt.Logger()).create_network(0)
    return net.add_activation(other.add_input("y", F32, (2, 3)), A.RELU)


def _shuffle(net, x, **attributes):
    return _set(net.add_shuffle(x), **attributes)


# rule id: (refused by "add" or "build", define(network, *inputs), input (shape, dtype)s, part of the error)
RULES = {
    # element-wise and select: equal ranks, size-1 broadcasting, one dtype, no bool arithmetic
    "elementwise_rank": ("add", lambda n, a, b: n.add_elementwise(a, b, E.SUM), [((2, 3), F32), ((3,), F32)],
                         "must have the same rank"),
    "elementwise_broadcast": ("add", lambda n, a, b: n.add_elementwise(a, b, E.SUM), [((2, 3), F32), ((3, 2), F32)],
                              "not broadcastable"),
    "elementwise_float_int": ("add", lambda n, a, b: n.add_elementwise(a, b, E.PROD), [((2,), F32), ((2,), I32)],
                              "must have the same dtype"),
    "elementwise_half_float": ("add", lambda n, a, b: n.add_elementwise(a, b, E.SUM), [((2,), F16), ((2,), F32)],
                               "must have the same dtype"),
    "bool_arithmetic": ("add", lambda n, a, b: n.add_elementwise(a, b, E.SUM), [((2,), BOOL), ((2,), BOOL)],
                        "does not accept BOOL"),
    "logical_on_float": ("add", lambda n, a, b: n.add_elementwise(a, b, E.AND), [((2,), F32), ((2,), F32)],
                         "needs BOOL inputs"),
    "elementwise_uint8": ("add", lambda n, a, b: n.add_elementwise(a, b, E.SUM), [((2,), trt.uint8)] * 2,
                          "does not accept torch.uint8"),
    "pow_on_int": ("add", lambda n, a, b: n.add_elementwise(a, b, E.POW), [((2,), I32)] * 2, "POW needs float"),
    "select_rank": ("add", lambda n, c, t, e: n.add_select(c, t, e), [((2, 3), BOOL), ((3,), F32), ((3,), F32)],
                    "must have the same rank"),
    "select_condition_float": ("add", lambda n, c, t, e: n.add_select(c, t, e), [((2,), F32)] * 3,
                               "condition must be BOOL"),
    "select_branch_dtypes": ("add", lambda n, c, t, e: n.add_select(c, t, e), [((2,), BOOL), ((2,), F32), ((2,), I32)],
                             "then/else inputs must have the same dtype"),
    # dtypes a layer lacks
    # NvInfer.h IActivationLayer: "Int32 and Int64 are valid only for kRELU" (RELU on them runs: test below)
    "activation_sigmoid_int64": ("add", lambda n, a: n.add_activation(a, A.SIGMOID), [((2,), I64)],
                                 "needs a float input"),
    # NvInfer.h IUnaryLayer: NEG and the rounding operations take floats only (converters emit 0 - x, identity)
    "unary_neg_int32": ("add", lambda n, a: n.add_unary(a, U.NEG), [((2,), I32)], "NEG does not accept torch.int32"),
    "unary_floor_int32": ("add", lambda n, a: n.add_unary(a, U.FLOOR), [((2,), I32)],
                          "FLOOR does not accept torch.int32"),
    # NvInferRuntimeBase.h DataType::kINT8: a quantized type; IO and arithmetic need Q/DQ layers
    "elementwise_int8": ("add", lambda n, a, b: n.add_elementwise(a, b, E.SUM), [((2,), I8)] * 2,
                         "does not accept torch.int8"),
    "activation_int8": ("add", lambda n, a: n.add_activation(a, A.RELU), [((2,), I8)], "needs a float input"),
    "unary_abs_int8": ("add", lambda n, a: n.add_unary(a, U.ABS), [((2,), I8)], "ABS does not accept torch.int8"),
    "int8_network_input": ("build", lambda n, a: n.add_cast(a, F32), [((2,), I8)], "INT8, a quantized type"),
    # NvInferRuntimeBase.h DataType::kUINT8: network IO only, converted by a cast to or from FLOAT/HALF
    "shuffle_uint8": ("add", lambda n, a: n.add_shuffle(a), [((2,), U8)], "accepts UINT8 only as network IO"),
    "slice_uint8": ("add", lambda n, a: n.add_slice(a, (0,), (1,), (1,)), [((2,), U8)],
                    "accepts UINT8 only as network IO"),
    "reduce_uint8": ("add", lambda n, a: n.add_reduce(a, R.SUM, 1, False), [((2,), U8)], "does not accept torch.uint8"),
    "cast_uint8_to_int32": ("add", lambda n, a: n.add_cast(a, I32), [((2,), U8)], "cast from UINT8 to DataType.INT32"),
    "cast_int32_to_uint8": ("add", lambda n, a: n.add_cast(a, U8), [((2,), I32)], "cast from torch.int32 to UINT8"),
    "unary_exp_int64": ("add", lambda n, a: n.add_unary(a, U.EXP), [((2,), I64)], "does not accept torch.int64"),
    "unary_not_float": ("add", lambda n, a: n.add_unary(a, U.NOT), [((2,), F32)], "does not accept torch.float32"),
    "matmul_int32": ("add", lambda n, a, b: n.add_matrix_multiply(a, M, b, M), [((2, 2), I32)] * 2,
                     "needs float inputs"),
    "softmax_int32": ("add", lambda n, a: n.add_softmax(a), [((2, 3), I32)], "needs a float input"),
    "reduce_avg_int": ("add", lambda n, a: n.add_reduce(a, R.AVG, 1, False), [((2,), I32)], "AVG needs a float"),
    "convolution_int_input": ("add", lambda n, x: _conv(n, x, 1, (1, 1), 1), [((1, 1, 3, 3), I32)],
                              "needs a FLOAT, HALF or BF16 input"),
    "cast_to_fp8": ("add", lambda n, a: n.add_cast(a, trt.fp8), [((2,), F32)], "cast to DataType.FP8"),
    "cast_from_fp8": ("add", lambda n, a: n.add_cast(a, F32), [((2,), trt.fp8)], "cast from FP8"),
    "constant_bool_weights": ("add", lambda n: n.add_constant((2,), np.array([True, False])), [],
                              "cannot be BOOL or UINT8"),
    # shapes, ranges and bitmasks known while defining
    "matmul_inner_dims": ("add", lambda n, a, b: n.add_matrix_multiply(a, M, b, M), [((2, 3), F32), ((4, 5), F32)],
                          "inner dimensions differ"),
    "matmul_batch_rank": ("add", lambda n, a, b: n.add_matrix_multiply(a, M, b, M), [((2, 2, 3), F32), ((3, 4), F32)],
                          "different numbers of batch dims"),
    "reduce_axes_past_rank": ("add", lambda n, a: n.add_reduce(a, R.SUM, 1 << 2, False), [((2, 3), F32)],
                              "names a dim beyond rank 2"),
    "reduce_axes_empty": ("add", lambda n, a: n.add_reduce(a, R.SUM, 0, False), [((2, 3), F32)],
                          "must be a non-zero bitmask"),
    "normalization_axes_past_rank": ("add", lambda n, x, s, b: n.add_normalization(x, s, b, 1 << 3),
                                     [((2, 3, 4), F32), ((1, 1, 4), F32), ((1, 1, 4), F32)], "beyond rank 3"),
    "convolution_kernel_channels": ("build", lambda n, x: _conv(n, x, 2, (3, 3), 4), [((1, 3, 5, 5), F32)],
                                    "kernel holds 72 weights"),
    "convolution_rank": ("add", lambda n, x: _conv(n, x, 1, (3, 3), 1), [((1, 5, 5), F32)], "needs a rank-4 input"),
    "pooling_rank": ("add", lambda n, x: n.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2)), [((3, 4, 4), F32)],
                     "needs a rank-4 input"),
    "padding_not_2d": ("add", lambda n, x: n.add_padding_nd(x, (1, 1, 1), (1, 1, 1)), [((1, 2, 3, 4, 5), F32)],
                       "only 2-D padding"),
    "scale_rank_3": ("add", lambda n, x: n.add_scale(x, trt.ScaleMode.UNIFORM), [((2, 3, 4), F32)], "rank >= 4"),
    # NvInfer.h addConstant: "weights ... count must be > 0" (a zero-volume constant is refused)
    "constant_zero_volume": ("add", lambda n: n.add_constant((2, 0), np.zeros((2, 0), np.float32)), [],
                             "has zero volume"),
    "constant_volume": ("add", lambda n: n.add_constant((2, 3), np.zeros(5, np.float32)), [],
                        "hold 5 values but shape (2, 3) needs 6"),
    "gather_axis": ("add", lambda n, d, i: n.add_gather(d, i, 2), [((2, 3), F32), ((2,), I32)], "axis 2 is out of"),
    "gather_float_indices": ("add", lambda n, d, i: n.add_gather(d, i, 0), [((2, 3), F32), ((2,), F32)],
                             "indices must be INT32 or INT64"),
    "concatenation_dtypes": ("add", lambda n, a, b: n.add_concatenation([a, b]), [((2,), F32), ((2,), F16)],
                             "must have the same dtype"),
    "squeeze_non_unit": ("add", lambda n, a: n.add_squeeze(a, _const(n, np.array([0], np.int64))), [((2, 1), F32)],
                         "has size 2, not 1"),
    "tensor_of_another_network": ("add", _from_other_network, [((2, 3), F32)], "not a tensor of this network"),
    "duplicate_input_name": ("add", lambda n, a: n.add_input("in0", F32, (2,)), [((2,), F32)], "already exists"),
    # attributes set after add_*: the builder refuses
    "reshape_volume": ("build", lambda n, a: _shuffle(n, a, reshape_dims=(4,)), [((2, 3), F32)],
                       "changes the volume"),
    "reshape_two_inferred": ("build", lambda n, a: _shuffle(n, a, reshape_dims=(-1, -1)), [((2, 3), F32)],
                             "more than one -1"),
    "reshape_zero_past_rank": ("build", lambda n, a: _shuffle(n, a, reshape_dims=(6, 0)), [((6,), F32)],
                               "past the input's rank 1"),
    "transpose_not_permutation": ("build", lambda n, a: _shuffle(n, a, first_transpose=(0, 0)), [((2, 3), F32)],
                                  "is not a permutation"),
    "slice_out_of_range": ("build", lambda n, a: n.add_slice(a, (2, 0), (2, 2), (1, 1)), [((3, 3), F32)],
                           "reads position 3 of dim 0 (size 3) with STRICT_BOUNDS"),
    "gather_constant_indices_out_of_range": (
        "build", lambda n, d: n.add_gather(d, _const(n, np.array([0, 3], np.int32)), 1), [((2, 3), F32)],
        "gather indices hold 3, outside [0, 3)"),
    "softmax_two_axes": ("build", lambda n, a: _set(n.add_softmax(a), axes=0b11), [((2, 3), F32)],
                         "exactly one bit"),
    "concatenation_axis": ("build", lambda n, a, b: _set(n.add_concatenation([a, b]), axis=2), [((2, 3), F32)] * 2,
                           "axis 2 is out of range for rank 2"),
    "convolution_groups": ("build", lambda n, x: _conv(n, x, 2, (1, 1), 3, num_groups=2), [((1, 3, 4, 4), F32)],
                           "not divisible by num_groups 2"),
    "normalization_groups": ("build", lambda n, x, s, b: _set(n.add_normalization(x, s, b, 0b100), num_groups=4),
                             [((2, 6, 4), F32), ((1, 1, 1), F32), ((1, 1, 1), F32)], "does not divide the 6 channels"),
    # the network as a whole
    "no_outputs": ("build", lambda n, a: [], [((2,), F32)], "has no outputs"),
    "input_marked_as_output": ("build", lambda n, a: a, [((2,), F32)], "names must be unique"),
    "dynamic_input_without_profile": ("build", lambda n, a: n.add_identity(a), [((-1, 3), F32)],
                                      "but no optimization profile was added"),
    "profile_outside_declared_shape": ("build", lambda n, a: n.add_identity(a), [((-1, 3), F32)],
                                       "does not match its declared shape"),
}
PROFILES = {"profile_outside_declared_shape": {"in0": ((1, 4), (2, 4), (4, 4))}}


def _accepted(define):
    """The define, asserting the network accepted it: the builder is the one to refuse."""
    def accepted(net, *inputs):
        result = define(net, *inputs)
        assert result is not None, "refused while defining, but TensorRT refuses this only when building"
        return result
    return accepted


@pytest.mark.parametrize("when, define, specs, message", RULES.values(), ids=RULES.keys())
def test_reference_refuses_what_tensorrt_refuses(refused, refused_at_build, request, when, define, specs, message):
    if when == "add":
        errors = refused(define, specs)
    else:
        errors = refused_at_build(_accepted(define), specs, profile=PROFILES.get(request.node.callspec.id))
    assert message in errors


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_relu_on_int32_and_int64_is_accepted(run_network, dtype):
    """NvInfer.h IActivationLayer: "Int32 and Int64 are valid only for kRELU"."""
    x = torch.tensor([-3, 0, 5], dtype=dtype)
    got = run_network(lambda n, a: n.add_activation(a, A.RELU).get_output(0), [x])
    torch.testing.assert_close(got, torch.relu(x))


@pytest.mark.parametrize("to", [F32, F16])
def test_uint8_input_cast_to_float_is_accepted(run_network, to):
    x = torch.tensor([0, 7, 255], dtype=torch.uint8)
    got = run_network(lambda n, a: n.add_cast(a, to).get_output(0), [x])
    torch.testing.assert_close(got, x.float().to(got.dtype))


def _relu_chain(net, length):
    x = net.add_input("x", F32, (2, 3))
    layers = []
    for _ in range(length):
        layers.append(net.add_activation(x, A.RELU))
        x = layers[-1].get_output(0)
    net.mark_output(x)
    return layers


def test_build_infers_again_only_the_layers_changed_since_their_inference_and_their_consumers(monkeypatch):
    builder = trt.Builder(trt.Logger())
    net = builder.create_network(0)
    layers = _relu_chain(net, 4)
    layers[2].type = A.SIGMOID
    inferred = []
    infer = net._infer
    monkeypatch.setattr(net, "_infer", lambda layer: (inferred.append(layer), infer(layer)))
    assert builder.build_serialized_network(net, builder.create_builder_config()) is not None
    assert inferred == layers[2:]


def test_naming_a_layer_keeps_its_inferred_shapes(monkeypatch):
    """Converters name every layer after adding it: a name changes no shape, so it must not cost a second
    inference (half the network's inference time on BERT-base)."""
    net = trt.Builder(trt.Logger()).create_network(0)
    layers = _relu_chain(net, 3)
    inferred = []
    infer = net._infer
    monkeypatch.setattr(net, "_infer", lambda layer: (inferred.append(layer), infer(layer)))
    for index, layer in enumerate(layers):
        layer.name = f"relu/{index}"
        layer.metadata = "aten::relu"
        assert tuple(layer.get_output(0).shape) == (2, 3)
    assert inferred == []


def test_a_consumer_of_a_layer_changed_after_it_was_added_is_checked_again_at_build(refused_at_build):
    def define(net, a, b):
        shuffle = net.add_shuffle(a)
        shuffle.reshape_dims = (2, 3)
        total = net.add_elementwise(shuffle.get_output(0), b, E.SUM)
        shuffle.reshape_dims = (3, 2)
        return total

    assert "broadcast" in refused_at_build(define, [((6,), F32), ((2, 3), F32)])
