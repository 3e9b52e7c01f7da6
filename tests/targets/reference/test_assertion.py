"""IAssertionLayer: a BOOL shape-tensor condition, checked by the builder where no dynamic dim reaches it and by the
engine at each new set of input shapes where one does."""

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt

from .conftest import RecordingLogger, host_engine

OP = trt.ElementWiseOperation


def _rows_at_most(limit):
    """define(network, x): x + 1, asserting that x has at most `limit` rows."""
    def define(network, x):
        rows = network.add_gather(network.add_shape(x).get_output(0), _constant(network, [0], np.int32), 0)
        fits = network.add_elementwise(rows.get_output(0), _constant(network, [limit]), OP.GREATER).get_output(0)
        holds = network.add_unary(fits, trt.UnaryOperation.NOT).get_output(0)
        assert network.add_assertion(holds, f"at most {limit} rows").message == f"at most {limit} rows"
        return network.add_elementwise(x, _constant(network, [[1.0]], np.float32), OP.SUM).get_output(0)
    return define


def _constant(network, values, dtype=np.int64):
    values = np.array(values, dtype=dtype)
    return network.add_constant(values.shape, trt.Weights(values)).get_output(0)


def _context(engine, x):
    context = engine.create_execution_context()
    context.error_recorder = recorder = _Recorder()
    context.set_input_shape("x", tuple(x.shape))
    context.set_tensor_address("x", x.data_ptr())
    return context, recorder


class _Recorder(trt.IErrorRecorder):
    def __init__(self):
        trt.IErrorRecorder.__init__(self)
        self.errors = []

    def report_error(self, code, description):
        self.errors.append(description)
        return False


def test_a_condition_that_holds_at_the_input_shapes_lets_the_engine_run():
    _, engine = host_engine(_rows_at_most(4), (-1, 3))
    x = torch.randn(4, 3)
    context, recorder = _context(engine, x)
    y = torch.empty(tuple(context.get_tensor_shape("y")))
    context.set_tensor_address("y", y.data_ptr())
    assert context.infer_shapes() == [] and context.execute_async_v3(0) and not recorder.errors
    torch.testing.assert_close(y, x + 1)


def test_a_condition_false_at_the_input_shapes_fails_the_run_with_its_message():
    _, engine = host_engine(_rows_at_most(4), (-1, 3))
    x = torch.randn(5, 3)
    context, recorder = _context(engine, x)
    assert tuple(context.get_tensor_shape("y")) == (-1, 3)  # unknown, as where an input shape is unset
    with pytest.raises(RuntimeError, match="fail an assertion"):
        context.infer_shapes()
    y = torch.empty(5, 3)
    context.set_tensor_address("y", y.data_ptr())
    assert not context.execute_async_v3(0)
    assert recorder.errors and all("assertion failed: at most 4 rows" in error for error in recorder.errors)


def test_a_static_condition_is_checked_by_the_builder():
    _, engine = host_engine(_rows_at_most(2), (2, 3))
    assert engine is not None
    logger = RecordingLogger()
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    x = network.add_input("x", trt.float32, (3, 3))
    network.mark_output(_rows_at_most(2)(network, x))
    assert builder.build_serialized_network(network, builder.create_builder_config()) is None
    assert "assertion failed: at most 2 rows" in " ".join(logger.errors())


@pytest.mark.parametrize("condition,why", [
    (lambda network, x: network.add_shape(x).get_output(0), "got torch.int64"),
    (lambda network, x: network.add_elementwise(x, x, OP.EQUAL).get_output(0), "got torch.bool of shape (2, 3)"),
])
def test_the_condition_must_be_a_bool_shape_tensor(refused, condition, why):
    errors = refused(lambda network, x: network.add_assertion(condition(network, x), "never"), [((2, 3), trt.float32)])
    assert "assertion condition must be a BOOL shape tensor" in errors and why in errors
