"""The reference behaves like TensorRT's pybind11 bindings: enums, implicit Dims/Weights conversions, and
failures reported the way TensorRT reports them (None, False, -1 or an exception, per the vendored manifest,
torch_trt/targets/tensorrt_api.json, and TensorRT's Python API documentation)."""

import gc

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt
from conformance.manifest import Manifest

from .conftest import RecordingLogger

MANIFEST = Manifest()
ENUMS = sorted(n for n in dir(trt) if isinstance(getattr(trt, n), type) and hasattr(getattr(trt, n), "__members__"))


def _network():
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    return builder, builder.create_network(0), logger


# -- enums --------------------------------------------------------------------------------------------------------

def test_enum_members_do_not_compare_equal_to_ints():
    assert trt.DataType.HALF != 1 and not (trt.DataType.HALF == 1) and not (1 == trt.DataType.HALF)
    assert trt.ReduceOperation.SUM != trt.ElementWiseOperation.SUM  # same value, different enums


@pytest.mark.parametrize("expression", [lambda: 1 << trt.BuilderFlag.DEBUG, lambda: trt.DataType.HALF + 1,
                                        lambda: trt.DataType.HALF | trt.DataType.FLOAT, lambda: list(trt.DataType)])
def test_enum_arithmetic_and_iteration_raise_type_error(expression):
    with pytest.raises(TypeError):
        expression()


def test_enum_int_lookup_name_value_and_bitmasks():
    assert trt.DataType(1) is trt.DataType.HALF and trt.DataType(value=8) is trt.DataType.INT64
    member = trt.BuilderFlag.REFIT
    assert (member.name, member.value, int(member), 1 << int(member)) == ("REFIT", 4, 4, 16)
    assert str(trt.DataType.HALF) == "DataType.HALF" and repr(trt.DataType.HALF) == "<DataType.HALF: 1>"
    assert {trt.DataType.HALF: "half"}[trt.DataType(1)] == "half"  # hashable, usable as keys
    assert trt.Logger.Severity is trt.ILogger.Severity and trt.Logger.WARNING is trt.ILogger.Severity.WARNING


ENUM_ARGUMENTS = {  # a call or assignment taking an enum, given an int or another enum's member of the same value
    "add_elementwise": lambda net, x: net.add_elementwise(x, x, 0),
    "add_reduce": lambda net, x: net.add_reduce(x, trt.ElementWiseOperation.SUM, 1, False),
    "add_unary": lambda net, x: net.add_unary(x, 4),
    "add_activation": lambda net, x: net.add_activation(x, 0),
    "add_topk": lambda net, x: net.add_topk(x, 0, 1, 2),
    "add_matrix_multiply": lambda net, x: net.add_matrix_multiply(x, 0, x, trt.MatrixOperation.TRANSPOSE),
    "add_cast": lambda net, x: net.add_cast(x, 3),
    "layer attribute": lambda net, x: setattr(net.add_elementwise(x, x, trt.ElementWiseOperation.SUM), "op", 1),
    "set_flag": lambda net, x: trt.Builder(RecordingLogger()).create_builder_config().set_flag(6),
}


@pytest.mark.parametrize("use", ENUM_ARGUMENTS.values(), ids=ENUM_ARGUMENTS.keys())
def test_enum_arguments_take_members_of_their_enum_only(use):
    """pybind11 refuses an int, or a member of another enum, where an enum is expected: a TypeError."""
    _, network, _ = _network()
    x = network.add_input("x", trt.float32, (2, 2))
    with pytest.raises(TypeError, match="expected a tensorrt"):
        use(network, x)


@pytest.mark.parametrize("enum", ENUMS)
def test_enum_members_are_the_bindings_in_declaration_order(enum):
    cls = getattr(trt, enum)
    assert list(cls.__members__) == MANIFEST.enums[enum][:len(cls.__members__)]
    assert {n: m.value for n, m in cls.__members__.items()} == {
        n: MANIFEST.enum_values[enum][n] for n in cls.__members__}


# -- Dims, Permutation, Weights -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3), [2, 3], trt.Dims([2, 3]), torch.Size([2, 3]), np.array([2, 3]),
                                   [np.int64(2), np.int32(3)]], ids=["tuple", "list", "Dims", "Size", "ndarray",
                                                                     "numpy_ints"])
def test_dims_accept_sequences_of_ints(shape):
    _, network, _ = _network()
    dims = network.add_input("x", trt.float32, shape).shape
    assert isinstance(dims, trt.Dims) and dims == (2, 3) and dims == [2, 3]


@pytest.mark.parametrize("shape", [(2.0, 3), "23", np.array([[2, 3]]), 5], ids=["float", "str", "2d_array", "int"])
def test_dims_refuse_what_is_not_a_sequence_of_ints(shape):
    _, network, _ = _network()
    with pytest.raises(TypeError):
        network.add_input("x", trt.float32, shape)


def test_dims_behave_like_the_binding():
    dims = trt.Dims([1, -1, 3])
    assert (len(dims), dims[1], dims[1:], repr(dims), trt.Dims().__len__()) == (3, -1, (-1, 3), "(1, -1, 3)", 0)
    assert dims == [1, -1, 3] and dims == (1, -1, 3) and dims != [1, 2, 3]
    with pytest.raises(TypeError):
        hash(dims)
    with pytest.raises(ValueError):
        trt.Dims(range(trt.Dims.MAX_DIMS + 1))
    assert trt.Permutation([0, 2, 1]) == (0, 2, 1, 0, 0, 0, 0, 0)


def test_shuffle_accepts_lists_for_permutation_and_dims(run_network):
    x = torch.randn(2, 3, 4)

    def define(net, a):
        layer = net.add_shuffle(a)
        layer.first_transpose, layer.reshape_dims = [2, 0, 1], [4, 6]
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [x]), x.permute(2, 0, 1).reshape(4, 6))


def test_numpy_arrays_are_accepted_as_weights_and_kept_alive(run_network):
    def define(net, a):
        array = np.arange(6, dtype=np.float32).reshape(2, 3)
        constant = net.add_constant((2, 3), array)  # an ndarray where Weights is expected; the layer keeps it
        del array
        gc.collect()
        return net.add_elementwise(a, constant.get_output(0), trt.ElementWiseOperation.SUM).get_output(0)

    x = torch.randn(2, 3)
    torch.testing.assert_close(run_network(define, [x]), x + torch.arange(6.0).reshape(2, 3))


def test_weights_constructors_and_read_only_attributes():
    empty, half = trt.Weights(), trt.Weights(type=trt.float16)
    assert (empty.dtype, empty.size, half.dtype, half.nbytes) == (trt.float32, 0, trt.float16, 0)
    weights = trt.Weights(np.ones((2, 3), np.int32))
    assert (weights.dtype, weights.size, weights.nbytes, weights.numpy().shape) == (trt.int32, 6, 24, (6,))
    with pytest.raises(AttributeError):
        weights.size = 3
    with pytest.raises(ValueError, match="float64"):
        trt.Weights(np.ones(3))
    with pytest.raises(ValueError, match="contiguous"):
        trt.Weights(np.ones((3, 4), np.float32)[:, ::2])


def test_layer_weight_attributes_convert_numpy_arrays():
    _, network, _ = _network()
    x = network.add_input("x", trt.float32, (1, 2, 4, 4))
    layer = network.add_convolution_nd(x, 3, (1, 1), np.ones((3, 2, 1, 1), np.float32))
    layer.bias = np.zeros(3, np.float32)
    assert isinstance(layer.bias, trt.Weights) and layer.bias.size == 3
    assert isinstance(layer.kernel_size_nd, trt.Dims) and layer.kernel_size_nd == [1, 1]


# -- failures: None, False, -1 or an exception, as TensorRT reports them -------------------------------------------

def test_refused_layers_return_none_and_log_an_error():
    _, network, logger = _network()
    a, b = network.add_input("a", trt.float32, (2, 3)), network.add_input("b", trt.float32, (3,))
    assert network.add_elementwise(a, b, trt.ElementWiseOperation.SUM) is None
    assert network.num_layers == 0 and "same rank" in " ".join(logger.errors())


def test_out_of_range_getters_return_none():
    _, network, _ = _network()
    layer = network.add_identity(network.add_input("x", trt.float32, (2,)))
    assert (network.get_layer(1), network.get_input(1), network.get_output(0)) == (None, None, None)
    assert (layer.get_input(1), layer.get_output(1), network.get_layer(-1)) == (None, None, None)
    assert network[0] is layer and len(network) == 1


def test_keyword_arguments_use_the_bindings_names():
    _, network, _ = _network()
    x = network.add_input(name="x", dtype=trt.float32, shape=(2, 3, 4))
    scale = network.add_constant(shape=(1, 1, 4), weights=np.ones((1, 1, 4), np.float32)).get_output(0)
    layer = network.add_normalization(input=x, scale=scale, bias=scale, axesMask=1 << 2)  # camelCase, as bound
    assert layer is not None and layer.axes == 4
    with pytest.raises(TypeError):
        network.add_activation(input=x, kind=trt.ActivationType.RELU)
    with pytest.raises(TypeError, match="channel_axis"):  # no default, though it follows defaulted parameters
        network.add_scale_nd(x, trt.ScaleMode.UNIFORM, None, None, None)


def test_builder_and_runtime_failures_return_none():
    builder, network, logger = _network()
    network.add_identity(network.add_input("x", trt.float32, (2,)))
    assert builder.build_serialized_network(network, builder.create_builder_config()) is None  # no outputs
    assert trt.Runtime(logger).deserialize_cuda_engine(b"not an engine") is None
    assert any("deserialize_cuda_engine" in message for message in logger.errors())


def test_profiles_raise_on_inconsistent_shapes_and_refuse_empty_ones():
    builder = trt.Builder(trt.Logger())
    profile = builder.create_optimization_profile()
    with pytest.raises(ValueError):
        profile.set_shape("x", (4, 3), (2, 3), (1, 3))  # min > max
    with pytest.raises(ValueError):
        profile.set_shape("x", (1, 3), (2, 3), (4, 3, 1))  # ranks differ
    assert not profile and builder.create_builder_config().add_optimization_profile(profile) == -1


def test_execution_context_reports_misuse_with_false(run_network):
    builder, network, logger = _network()
    x = network.add_input("x", trt.float32, (-1, 3))
    x.location = trt.TensorLocation.HOST
    y = network.add_identity(x).get_output(0)
    y.name, y.location = "y", trt.TensorLocation.HOST
    network.mark_output(y)
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 3), (2, 3), (4, 3))
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    engine = trt.Runtime(logger).deserialize_cuda_engine(builder.build_serialized_network(network, config))
    context = engine.create_execution_context()
    assert engine[0] == "x" and engine.get_tensor_mode("nothing") == trt.TensorIOMode.NONE
    assert context.set_input_shape("x", (8, 3)) is False  # outside the profile
    assert context.set_input_shape("y", (2, 3)) is False  # not an input
    assert context.set_tensor_address("nothing", 0) is False
    assert context.infer_shapes() == ["x"] and context.execute_async_v3(0) is False  # shape not set yet
