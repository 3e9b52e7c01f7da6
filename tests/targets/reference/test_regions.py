"""Regional code generation: a repeated block's code is generated once and called on each block's own weights.

Inductor is replaced by a stand-in that returns each region's graph as its code, so these run on the CPU; the
GPU suite runs the real one (tests/runtime/test_gpu_models.py)."""

import gc
import weakref

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt
from torch_trt.targets.reference import program as reference_program
from torch_trt.targets.reference import regions

from counted_regions import counting

from .conftest import host_engine

BLOCKS = 12
SUM, PROD = trt.ElementWiseOperation.SUM, trt.ElementWiseOperation.PROD


def _weights(k, shape):
    return np.random.default_rng(k).standard_normal(shape).astype(np.float32)


def _dense(network, x, seed, activation):
    """activation(x @ W + b), W and b drawn from `seed`."""
    weight = network.add_constant((3, 3), _weights(seed, (3, 3))).get_output(0)
    product = network.add_matrix_multiply(x, trt.MatrixOperation.NONE, weight, trt.MatrixOperation.NONE)
    bias = network.add_constant((1, 3), _weights(seed + 1, (1, 3))).get_output(0)
    biased = network.add_elementwise(product.get_output(0), bias, SUM).get_output(0)
    return network.add_activation(biased, activation).get_output(0)


def _block(network, x, k, residual):
    """relu(tanh(x @ W + b) @ W' + b' + residual), with the block's own weights."""
    hidden = _dense(network, x, 4 * k, trt.ActivationType.TANH)
    output = network.add_matrix_multiply(hidden, trt.MatrixOperation.NONE,
                                         network.add_constant((3, 3), _weights(4 * k + 2, (3, 3))).get_output(0),
                                         trt.MatrixOperation.NONE).get_output(0)
    bias = network.add_constant((1, 3), _weights(4 * k + 3, (1, 3))).get_output(0)
    summed = network.add_elementwise(network.add_elementwise(output, bias, SUM).get_output(0), residual, SUM)
    return network.add_activation(summed.get_output(0), trt.ActivationType.RELU).get_output(0)


def _blocks(odd=None, lead_in=False):
    """BLOCKS blocks in a chain; block `odd`'s residual is the network's input instead of its own input. With
    `lead_in`, the chain starts with relu(x + c), the ops that end every block."""
    def define(network, x):
        y = x
        if lead_in:
            shift = network.add_constant((2, 3), _weights(99, (2, 3))).get_output(0)
            y = network.add_activation(network.add_elementwise(x, shift, SUM).get_output(0),
                                       trt.ActivationType.RELU).get_output(0)
        for k in range(BLOCKS):
            y = _block(network, y, k, x if k == odd else y)
        return y
    return define


def _expected(x, odd=None, lead_in=False):
    def dense(y, seed):
        return y @ torch.from_numpy(_weights(seed, (3, 3))) + torch.from_numpy(_weights(seed + 1, (1, 3)))

    y = torch.relu(x + torch.from_numpy(_weights(99, (2, 3)))) if lead_in else x
    for k in range(BLOCKS):
        y = torch.relu(dense(torch.tanh(dense(y, 4 * k)), 4 * k + 2) + (x if k == odd else y))
    return y


def _compiled_by_regions(monkeypatch, define, shape=(2, 3)):
    """(the engine's program compiled as on CUDA without freezing, [[region, calls]] of each region compiled)."""
    stand_in, compiled = counting(lambda region, examples, patches: region)
    monkeypatch.setattr(reference_program, "_inductor", stand_in)
    program = host_engine(define, shape=shape)[1]._module
    assert not reference_program._freezes(program, torch.device("cuda"))
    return reference_program.compile_program(program, 3, torch.device("cuda"), tf32=False), compiled


def _ops(region):
    return sum(node.op == "call_function" for node in region.graph.nodes)


def _first_op(region):
    return next(node.target for node in region.graph.nodes if node.op == "call_function")


def test_a_repeated_block_generates_its_code_once_and_runs_with_each_blocks_weights(monkeypatch):
    run, compiled = _compiled_by_regions(monkeypatch, _blocks())
    x = torch.randn(2, 3)
    torch.testing.assert_close(run(x), [_expected(x)])
    (block, calls), = [entry for entry in compiled if entry[1] > 1]
    assert calls == BLOCKS
    assert sum(_ops(region) for region, _ in compiled) < 2 * _ops(block)  # the rest is the few ops around the run


def test_blocks_start_at_a_gemm_where_fused_kernels_would_be_split_elsewhere(monkeypatch):
    """The chain starts with the ops that end each block (a sum and its relu), so blocks could start there; cut
    between a sum and what reads it, the sum would be stored in its dtype where inductor keeps it in float32 inside
    one kernel. Cut before the GEMM, the values crossing are stored for the GEMM anyway."""
    run, compiled = _compiled_by_regions(monkeypatch, _blocks(lead_in=True))
    x = torch.randn(2, 3)
    torch.testing.assert_close(run(x), [_expected(x, lead_in=True)])
    (block, calls), = [entry for entry in compiled if entry[1] > 1]
    assert calls == BLOCKS and _first_op(block) == torch.ops.aten.addmm.default


def test_each_input_shape_of_a_dynamic_engine_generates_its_own_regions(monkeypatch):
    run, compiled = _compiled_by_regions(monkeypatch, _blocks(), shape=(-1, 3))
    for batch in (2, 5):
        x = torch.randn(batch, 3)
        torch.testing.assert_close(run(x), [_expected(x)])
    assert [calls for _, calls in compiled if calls > 1] == [BLOCKS, BLOCKS]


def test_a_block_that_reads_another_value_ends_the_run(monkeypatch):
    """Block 8 adds the network's input where its peers add their own: the same ops on values of the same shapes,
    wired differently, so blocks 0-7 share code and block 8 on is generated apart."""
    run, compiled = _compiled_by_regions(monkeypatch, _blocks(odd=8))
    x = torch.randn(2, 3)
    torch.testing.assert_close(run(x), [_expected(x, odd=8)])
    assert sorted(calls for _, calls in compiled) == [1, 8]


def test_a_program_without_repeats_is_one_region(monkeypatch):
    def define(network, x):
        return network.add_activation(x, trt.ActivationType.RELU).get_output(0)

    run, compiled = _compiled_by_regions(monkeypatch, define)
    x = torch.randn(2, 3)
    torch.testing.assert_close(run(x), [torch.relu(x)])
    assert [calls for _, calls in compiled] == [1]


def test_a_blocks_values_are_dropped_once_the_next_block_has_read_them(monkeypatch):
    """As in the generated program, intermediates die at their last reader: block k's output is read by block k+1
    only, so it is gone by the time block k+2 runs."""
    results, alive_at_call = [], []
    original = regions.CompiledRegions.__init__

    def recording(self, graph_module, weights, calls, compile_region):
        def compile_recording(region, examples):
            code = compile_region(region, examples)

            def call(*arguments):
                alive_at_call.append([reference() is not None for reference in results[:-1]])
                outputs = code(*arguments)
                results.append(weakref.ref(outputs[0]))
                return outputs
            return call
        original(self, graph_module, weights, calls, compile_recording)

    monkeypatch.setattr(regions.CompiledRegions, "__init__", recording)
    run, _ = _compiled_by_regions(monkeypatch, _blocks())
    gc.collect()
    run(torch.randn(2, 3))
    assert len(alive_at_call) >= BLOCKS
    assert not any(any(alive) for alive in alive_at_call)


@pytest.mark.parametrize("keys, found", [
    ("xy" + "abcd" * 3 + "z", (2, 4, 3, 0)),
    ("x" + "abc" * 3 + "ab" + "y", (1, 3, 3, 2)),  # the blocks may start up to 2 keys later and still be 3
    ("abcdefg", None),
])
def test_the_longest_run_is_the_one_saving_the_most_keys(monkeypatch, keys, found):
    monkeypatch.setattr(regions, "MIN_SAVED_NODES", 2)
    assert regions._longest_run(list(keys)) == found


def test_a_program_that_reads_shape_values_is_traced_on_the_real_inputs(monkeypatch, caplog):
    """Fake tensors hold no values: a reshape to a computed shape is traced on the real inputs, which bakes it in."""
    def define(network, x):
        shuffle = network.add_shuffle(x)
        shuffle.set_input(1, network.add_shape(x).get_output(0))
        return network.add_activation(shuffle.get_output(0), trt.ActivationType.RELU).get_output(0)

    run, compiled = _compiled_by_regions(monkeypatch, define)
    x = torch.randn(2, 3)
    with caplog.at_level("DEBUG", logger="torch_trt"):
        torch.testing.assert_close(run(x), [torch.relu(x)])
    assert "traced on the real inputs" in caplog.text
    assert [calls for _, calls in compiled] == [1]


def test_a_tensor_the_program_makes_while_traced_runs_with_its_values(monkeypatch):
    """A layer's output made from Python values (a shape tensor) is a constant of the trace, read at run time from
    the traced module (its record in the trace is a fake copy, with no values)."""
    def define(network, x):
        shape = network.add_cast(network.add_shape(x).get_output(0), trt.float32).get_output(0)
        column = network.add_shuffle(shape)
        column.reshape_dims = (2, 1)
        return network.add_elementwise(x, column.get_output(0), PROD).get_output(0)

    run, _ = _compiled_by_regions(monkeypatch, define)
    x = torch.randn(2, 3)
    torch.testing.assert_close(run(x), [x * torch.tensor([[2.0], [3.0]])])


def test_a_program_of_no_ops_generates_no_code(monkeypatch):
    """Its output is a folded constant: the traced program returns a weight, and no region is compiled."""
    def define(network, x):
        constant = network.add_constant((2, 3), _weights(7, (2, 3))).get_output(0)
        return network.add_elementwise(constant, constant, SUM).get_output(0)

    run, compiled = _compiled_by_regions(monkeypatch, define)
    torch.testing.assert_close(run(torch.randn(2, 3)), [2 * torch.from_numpy(_weights(7, (2, 3)))])
    assert compiled == []


def _two_streams(network, x):
    """From a = x and r = relu(x) in half precision, BLOCKS blocks of r' = r + (a @ W + b), a' = tanh(r') * 0.5: `a`
    crosses into a GEMM, `r` only into a sum (a residual stream); then relu(r) + a, in float32."""
    def half(values):
        return network.add_constant(values.shape, values.astype(np.float16)).get_output(0)

    a = network.add_cast(x, trt.float16).get_output(0)
    r = network.add_activation(a, trt.ActivationType.RELU).get_output(0)
    for k in range(BLOCKS):
        product = network.add_matrix_multiply(a, trt.MatrixOperation.NONE, half(_weights(k, (3, 3))),
                                              trt.MatrixOperation.NONE).get_output(0)
        biased = network.add_elementwise(product, half(_weights(k + 50, (1, 3))), SUM).get_output(0)
        r = network.add_elementwise(r, biased, SUM).get_output(0)
        a = network.add_elementwise(network.add_activation(r, trt.ActivationType.TANH).get_output(0),
                                    half(np.full((1, 1), 0.5)), PROD).get_output(0)
    relu = network.add_activation(r, trt.ActivationType.RELU).get_output(0)
    return network.add_cast(network.add_elementwise(relu, a, SUM).get_output(0), trt.float32).get_output(0)


def test_a_half_precision_residual_crosses_between_blocks_in_float32(monkeypatch):
    """Compiled whole, inductor keeps a sum that only pointwise code reads in float32; a cut would store it in half
    precision on every block. It crosses widened instead, while a GEMM's input crosses in its own dtype."""
    run, compiled = _compiled_by_regions(monkeypatch, _two_streams)
    x = torch.randn(2, 3)
    a = x.half()
    r = torch.relu(a)
    for k in range(BLOCKS):
        r = r + (a @ torch.from_numpy(_weights(k, (3, 3))).half() + torch.from_numpy(_weights(k + 50, (1, 3))).half())
        a = torch.tanh(r) * 0.5
    torch.testing.assert_close(run(x), [(torch.relu(r) + a).float()], atol=1e-2, rtol=1e-2)
    (block, calls), = [entry for entry in compiled if entry[1] > 1]
    arguments = [node.meta["val"] for node in block.graph.nodes if node.op == "placeholder"]
    (results,) = [node.args[0] for node in block.graph.nodes if node.op == "output"]
    assert sorted(str(value.dtype) for value in arguments if value.dim() and value.shape[0] == 2) == \
        ["torch.float16", "torch.float32"]
    assert sorted(str(result.meta["val"].dtype) for result in results) == ["torch.float16", "torch.float32"]
