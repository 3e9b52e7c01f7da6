"""The reference engine's program: constants folded, dead layers dropped, intermediates freed, code generated."""

import logging
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch._dynamo.utils import counters
from torch._inductor.utils import fresh_cache, run_and_get_code
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt
from torch_trt.targets.reference import program as reference_program
from torch_trt.targets.reference.lending import lending

from .conftest import host_engine

SUM, PROD = trt.ElementWiseOperation.SUM, trt.ElementWiseOperation.PROD


def _engine(define, shape=(2, 3), level=3):
    """The deserialized engine of define(network, x) -> output for a host input `x` of `shape` at `level`."""
    return host_engine(define, shape=shape, level=level)[1]


def _constant(network, value):
    return network.add_constant((2, 3), trt.Weights(np.full((2, 3), value, dtype=np.float32))).get_output(0)


def _scaled_plus_dead_branch(network, x):
    scale = network.add_elementwise(_constant(network, 2.0), _constant(network, 3.0), PROD).get_output(0)
    network.add_activation(x, trt.ActivationType.SIGMOID)  # read by nothing
    y = network.add_elementwise(x, scale, PROD).get_output(0)
    return network.add_activation(y, trt.ActivationType.RELU).get_output(0)


def _run(engine, x):
    context = engine.create_execution_context()
    y = torch.empty(x.shape)
    context.set_input_shape("x", tuple(x.shape))
    context.set_tensor_address("x", x.data_ptr())
    context.set_tensor_address("y", y.data_ptr())
    assert context.execute_async_v3(0)
    return y


def _kernels(program):
    return [type(node.target.__self__).__name__ for node in program.graph.nodes
            if node.op == "call_function" and hasattr(node.target, "__self__")]


def test_constants_are_folded_and_dead_layers_dropped():
    engine = _engine(_scaled_plus_dead_branch)
    program = engine._module
    assert _kernels(program) == ["IElementWiseLayer", "IActivationLayer"]
    assert [tuple(p.shape) for p in program.parameters()] == [(2, 3)]  # the folded 2 * 3, on the device once
    x = torch.randn(2, 3)
    torch.testing.assert_close(_run(engine, x), torch.relu(x * 6))


DIVISORS = [[2.0, 2.0, np.inf, 0.0], [-np.inf, 2.0, 0.0, 0.0]]


def _floor_divided_by_a_constant(network, x):
    divisor = network.add_constant((2, 4), trt.Weights(np.array(DIVISORS, dtype=np.float32))).get_output(0)
    return network.add_elementwise(x, divisor, trt.ElementWiseOperation.FLOOR_DIV).get_output(0)


def test_floor_division_of_infinities_is_the_same_at_every_level():
    """Generated code computed floor(a / b): inf for inf // 2 and -0.0 for -1 // inf, where the layer (PyTorch's
    kernel) and levels below code generation give NaN and -1; and +-inf // 0 is +-inf, as PyTorch's kernel gives."""
    x = torch.tensor([[np.inf, -np.inf, -1.0, np.inf], [1.0, 5.0, 1.0, -np.inf]])
    expected = torch.div(x, torch.tensor(DIVISORS), rounding_mode="floor")
    for level in (1, 4):  # CPU code generation starts at level 4
        torch.testing.assert_close(_run(_engine(_floor_divided_by_a_constant, (2, 4), level), x), expected,
                                   equal_nan=True)


def test_intermediates_are_dropped_after_their_last_reader():
    code = _engine(_scaled_plus_dead_branch)._module.code
    assert "= None" in code, code  # the generated code releases each value after its last use


def test_generated_code_matches_the_generated_python(caplog):
    x = torch.randn(2, 3)
    with caplog.at_level(logging.INFO, logger="torch_trt"):
        interpreted = _run(_engine(_scaled_plus_dead_branch), x)
        assert "inductor generates its kernels" not in caplog.text
        generated = _run(_engine(_scaled_plus_dead_branch, level=4), x)  # CPU code generation starts at level 4
        assert "inductor generates its kernels" in caplog.text
    torch.testing.assert_close(generated, interpreted)


def test_tf32_follows_the_builder_flag():
    seen = []
    engine = _engine(lambda network, x: network.add_activation(x, trt.ActivationType.RELU).get_output(0))
    hook = torch.nn.modules.module.register_module_forward_pre_hook(  # the program is the one module run
        lambda *_: seen.append(torch.backends.cuda.matmul.allow_tf32))
    try:
        _run(engine, torch.randn(2, 3))
    finally:
        hook.remove()
    assert seen == [True]  # TensorRT's default, whatever PyTorch's own switch says


def test_the_optimization_level_setting_reaches_the_engine():
    import torch_trt
    module = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()).eval()
    compiled = torch_trt.compile(module, [torch.randn(2, 3)], target="reference", min_block_size=1,
                                 optimization_level=1)
    engine = bytes(next(n for n in compiled.graph.nodes() if n.kind() == "prim::Constant"
                        and n.output().type().kind() == "TensorType" and n.output().toIValue().dtype == torch.uint8)
                   .output().toIValue().numpy())
    plan, _ = torch_trt.targets.reference.plan.deserialize(engine)
    assert plan["optimization_level"] == 1


def test_engines_generate_their_code_one_at_a_time(monkeypatch):
    """make_fx and inductor keep global state while they trace: two engines' first calls from two threads raised
    `CURRENT_PATCHER is None` in torch.fx."""
    import threading
    import time

    spans = []

    def slow_generate(program, inputs, patches, whole):
        start = time.perf_counter()
        time.sleep(0.05)
        spans.append((start, time.perf_counter()))
        return program

    monkeypatch.setattr(reference_program, "_generate", slow_generate)
    runs = [reference_program.compile_program(_engine(_scaled_plus_dead_branch)._module, 4, torch.device("cpu"),
                                              tf32=False) for _ in range(2)]
    threads = [threading.Thread(target=run, args=(torch.ones(2, 3),)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (first, second) = sorted(spans)
    assert first[1] <= second[0], spans


@pytest.mark.parametrize("device, level, starts", [("cuda", 2, True), ("cuda", 1, False), ("cpu", 4, True),
                                                    ("cpu", 3, False)])
def test_inductor_workers_start_only_for_engines_that_generate_code(monkeypatch, device, level, starts):
    started = []
    monkeypatch.setattr("torch._inductor.async_compile.maybe_warm_pool", lambda: started.append(level))
    reference_program.start_code_generation(torch.device(device), level)
    assert started == [level] * starts


def test_compile_starts_the_inductor_workers_before_it_builds(monkeypatch):
    """Inductor's compile workers start while the pipeline runs, as inductor's own backend starts them on entry."""
    import torch_trt
    events = []
    monkeypatch.setattr("torch._inductor.async_compile.maybe_warm_pool", lambda: events.append("workers"))
    build = trt.Builder.build_serialized_network
    monkeypatch.setattr(trt.Builder, "build_serialized_network",
                        lambda *args: (events.append("build"), build(*args))[1])
    module = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()).eval()
    torch_trt.compile(module, [torch.randn(2, 3)], target="reference", min_block_size=1, optimization_level=4)
    assert events == ["workers", "build"]


@pytest.mark.parametrize("shape, inferred", [((2, 3), False), ((-1, 3), True)], ids=["static", "dynamic"])
def test_only_an_engine_with_dynamic_dims_infers_its_layers_for_its_output_shapes(monkeypatch, shape, inferred):
    engine = _engine(lambda network, x: network.add_activation(x, trt.ActivationType.RELU).get_output(0), shape)
    calls = []
    infer = engine._infer
    monkeypatch.setattr(engine, "_infer", lambda values: (calls.append(1), infer(values))[1])
    context = engine.create_execution_context()
    assert context.set_input_shape("x", (2, 3))
    assert tuple(context.get_tensor_shape("y")) == (2, 3) and calls == [1] * inferred


def test_a_null_output_address_is_refused():
    engine = _engine(_scaled_plus_dead_branch)
    context = engine.create_execution_context()
    x = torch.randn(2, 3)
    context.set_input_shape("x", (2, 3))
    context.set_tensor_address("x", x.data_ptr())
    context.set_tensor_address("y", 0)
    assert not context.execute_async_v3(0)
    assert "null address" in " ".join(engine._logger.errors())


def test_the_engine_keeps_weights_on_its_device_only_in_its_program():
    engine = _engine(_scaled_plus_dead_branch)
    held = [w for layer_weights in engine._weights for w in layer_weights.values()]
    assert held and all(w.is_meta for w in held)  # the folded constants' sources are not kept beside the program


def _reshape_slice_layer_norm(network, x):
    """x (2, 3) reshaped to (3, 2) through identity transposes, rows 1-2 sliced, layer-normalized over the last dim."""
    shuffle = network.add_shuffle(x)
    shuffle.reshape_dims = (3, 2)
    rows = network.add_slice(shuffle.get_output(0), (1, 0), (2, 2), (1, 1)).get_output(0)
    scale = network.add_constant((1, 2), trt.Weights(np.array([[2.0, 3.0]], dtype=np.float32))).get_output(0)
    bias = network.add_constant((1, 2), trt.Weights(np.array([[0.5, -1.0]], dtype=np.float32))).get_output(0)
    return network.add_normalization(rows, scale, bias, 1 << 1).get_output(0)


def test_the_program_gives_the_code_generator_one_op_per_layer_where_torch_has_one():
    """An identity transpose traces to nothing, an in-bounds slice to a view, a last-dims normalization to
    layer_norm: every op the program traces to is one more node for inductor to compile."""
    program = _engine(_reshape_slice_layer_norm)._module
    x = torch.randn(2, 3)
    ops = [str(node.target) for node in make_fx(program)(x).graph.nodes if node.op == "call_function"]
    assert "aten.permute.default" not in ops and "aten.index_select.default" not in ops, ops
    assert "aten.native_layer_norm.default" in ops and "aten.var_mean.correction" not in ops, ops
    expected = torch.nn.functional.layer_norm(x.reshape(3, 2)[1:], (2,), torch.tensor([2.0, 3.0]),
                                              torch.tensor([0.5, -1.0]), 1e-5)
    torch.testing.assert_close(program(x)[0], expected)


def test_generated_code_holds_the_weights_as_constants():
    """Frozen into the code, as TensorRT's builder bakes weights into the engine: inductor folds and lays them out
    once, and a call passes only the engine's inputs."""
    engine = _engine(_scaled_plus_dead_branch, level=4)  # CPU code generation starts at level 4
    _, code = run_and_get_code(_run, engine, torch.randn(2, 3))
    assert "_frozen_param" in "\n".join(code)


def _convolved(network, x):
    return network.add_convolution_nd(x, 2, (3, 3), np.ones((2, 2, 3, 3), np.float32)).get_output(0)


def _convolved_then_scaled(network, x):
    """A convolution's 36 weights, then a product with a constant of 392: most of the weights are not kernels."""
    y = _convolved(network, x)
    scale = network.add_constant((1, 2, 14, 14), np.full((1, 2, 14, 14), 0.5, np.float32)).get_output(0)
    return network.add_elementwise(y, scale, PROD).get_output(0)


@pytest.mark.parametrize("define, shape, device, frozen", [
    (_scaled_plus_dead_branch, (2, 3), "cuda", False),
    (_convolved, (1, 2, 4, 4), "cuda", True),
    (_convolved_then_scaled, (1, 2, 16, 16), "cuda", False),
    (_scaled_plus_dead_branch, (2, 3), "cpu", True),
], ids=["cuda-elementwise", "cuda-convolution", "cuda-convolution-among-larger-weights", "cpu-elementwise"])
def test_inductor_freezes_the_weights_on_the_cpu_and_of_convolutional_programs_on_cuda(monkeypatch, define, shape,
                                                                                     device, frozen):
    """Frozen weights pay where convolutions hold most of the weights on CUDA (and repack weights for oneDNN on the
    CPU); elsewhere, a transformer's patch embedding included, freezing's passes cost compile time for nothing
    (program._freezes)."""
    seen = []
    monkeypatch.setattr(reference_program, "_inductor",
                        lambda graph, inputs, patches: seen.append(patches["freezing"]) or graph)
    run = reference_program.compile_program(_engine(define, shape)._module, 4, torch.device(device), tf32=False)
    run(torch.randn(shape))
    assert seen == [frozen]


def _grouped(network, x):
    layer = network.add_convolution_nd(x, 2, (3, 3), np.ones((2, 1, 3, 3), np.float32))
    layer.num_groups = 2
    return layer.get_output(0)


def _patches(network, x):
    layer = network.add_convolution_nd(x, 2, (2, 2), np.ones((2, 2, 2, 2), np.float32))
    layer.stride_nd = (2, 2)
    return layer.get_output(0)


def _dilated_patches(network, x):
    layer = network.add_convolution_nd(x, 2, (2, 2), np.ones((2, 2, 2, 2), np.float32))
    layer.stride_nd = layer.dilation_nd = (2, 2)
    return layer.get_output(0)


def _kernel_layouts(program):
    return [tuple(program.get_parameter(node.args[1]["kernel"].target).stride()) for node in program.graph.nodes
            if reference_program._layer_type(node) == trt.LayerType.CONVOLUTION]


@pytest.mark.parametrize("define, frozen, layouts", [
    (_convolved, True, [(18, 1, 6, 2)]),
    (_convolved_then_scaled, False, [(1,)]),
    (_grouped, True, [(1,)]),
    (_patches, True, [(1,)]),
    (_dilated_patches, True, [(8, 1, 4, 2)]),
], ids=["plain", "not-frozen", "grouped", "patch-embedding", "dilated-windows-as-wide-as-the-stride"])
def test_a_frozen_convolutional_program_holds_its_kernels_channels_last(monkeypatch, define, frozen, layouts):
    """Inductor runs such a program's convolutions channels-last and would otherwise freeze a channels-last copy of
    every kernel beside the program's own; grouped ones (which it may leave alone) and patch embeddings (a GEMM
    over patches; a dilated window is no patch) keep their plan layout, as do the kernels of a program it does not freeze."""
    monkeypatch.setattr(reference_program, "_inductor", lambda graph, inputs, patches: graph)
    program = _engine(define, (1, 2, 16, 16))._module
    x = torch.randn(1, 2, 16, 16)
    expected = program(x)
    run = reference_program.compile_program(program, 4, torch.device("cuda"), tf32=False)
    assert reference_program._freezes(program, torch.device("cuda")) == frozen
    assert _kernel_layouts(program) == layouts
    torch.testing.assert_close(run(x), expected)


def test_a_convolutional_program_reading_lent_kernels_is_compiled_whole_without_freezing(monkeypatch):
    """Kernels lent by the model (lending.py) stay the model's: frozen, inductor would hold a folded, channels-last
    copy of each beside them. Such a program is still compiled whole, as inductor lays a convolutional network out
    channels-last from end to end (program._convolutional)."""
    seen = []
    monkeypatch.setattr(reference_program, "_inductor",
                        lambda graph, inputs, patches: seen.append((graph, patches["freezing"])) or graph)
    kernel = torch.ones(2, 2, 3, 3)  # _convolved's
    with lending([kernel]):
        program = _engine(_convolved, (1, 2, 16, 16))._module
        run = reference_program.compile_program(program, 4, torch.device("cuda"), tf32=False)
    x = torch.randn(1, 2, 16, 16)
    torch.testing.assert_close(run(x), program(x))
    assert seen == [(program, False)]
    assert [p.untyped_storage().data_ptr() for p in program.parameters()] == [kernel.untyped_storage().data_ptr()]


@pytest.mark.parametrize("level, benchmarks, autotunes", [(3, False, False), (4, True, False), (5, True, True)])
def test_higher_levels_spend_build_time_autotuning(monkeypatch, level, benchmarks, autotunes):
    """As TensorRT's builder tries more tactics at higher levels: 4 times pointwise kernels' configs and padded matrix
    products, 5 all kernels (GEMMs and convolutions against cuBLAS's and cuDNN's); the default 3 takes heuristics."""
    seen = []
    monkeypatch.setattr(reference_program, "_inductor", lambda graph, inputs, patches: seen.append(patches) or graph)
    run = reference_program.compile_program(_engine(_convolved, (1, 2, 4, 4))._module, level, torch.device("cuda"),
                                            tf32=False)
    run(torch.randn(1, 2, 4, 4))
    assert [(p["triton.autotune_pointwise"], p["shape_padding"], p["max_autotune"]) for p in seen] == \
        [(benchmarks, benchmarks, autotunes)]


def _reshaped_to_its_own_shape(network, x):
    shuffle = network.add_shuffle(x)
    shuffle.set_input(1, network.add_shape(x).get_output(0))  # a shape tensor whose values the reshape reads
    return network.add_activation(shuffle.get_output(0), trt.ActivationType.RELU).get_output(0)


def test_only_a_program_that_reads_shape_values_is_traced_on_the_real_inputs_first(caplog):
    """Inductor traces a program with fake tensors, which hold no values: a reshape to a computed shape needs them."""
    x = torch.randn(2, 3)
    with caplog.at_level(logging.DEBUG, logger="torch_trt"):
        torch.testing.assert_close(_run(_engine(_scaled_plus_dead_branch, level=4), x), torch.relu(x * 6))
        assert "traced on the real inputs" not in caplog.text
        torch.testing.assert_close(_run(_engine(_reshaped_to_its_own_shape, level=4), x), torch.relu(x))
        assert "traced on the real inputs" in caplog.text


def _scaled_by(value):
    def define(network, x):
        return network.add_activation(network.add_elementwise(x, _constant(network, value), PROD).get_output(0),
                                      trt.ActivationType.RELU).get_output(0)
    return define


def test_an_engine_of_the_same_structure_loads_its_generated_code_from_inductors_cache():
    """Inductor's FX graph cache (on disk, so across processes too) keys the code by the weights' shapes: the second
    engine skips code generation and still computes with its own weights."""
    x = torch.randn(2, 3)
    with fresh_cache():
        counters.clear()
        torch.testing.assert_close(_run(_engine(_scaled_by(2.0), level=4), x), torch.relu(x * 2))
        assert counters["inductor"]["fxgraph_cache_miss"] == 1 and not counters["inductor"]["fxgraph_cache_hit"]
        torch.testing.assert_close(_run(_engine(_scaled_by(-3.0), level=4), x), torch.relu(x * -3))
        assert counters["inductor"]["fxgraph_cache_hit"] == 1, dict(counters["inductor"])


def test_a_cached_engine_never_runs_with_another_engines_one_element_constant():
    """The cache keys frozen weights by shape, and inductor writes a one-element one into the code as a literal: the
    biased variance, whose divisor is all that differs from the unbiased one's, must not reuse that code."""
    x = torch.randn(3, 4)
    with fresh_cache():
        counters.clear()
        for unbiased in (True, False):
            torch._dynamo.reset()
            compiled = torch.compile(lambda t, unbiased=unbiased: torch.var(t, unbiased=unbiased), backend="tensorrt",
                                     options={"optimization_level": 4, "min_block_size": 1})
            torch.testing.assert_close(compiled(x), torch.var(x, unbiased=unbiased))
        assert counters["inductor"]["fxgraph_cache_hit"] == 1, dict(counters["inductor"])


def test_a_compile_that_generates_no_code_imports_no_inductor():
    """Inductor's code generator takes seconds to import: a TorchScript compile of an engine and its call on the CPU
    at the default level, which generates no code, must not pay for it. (Dynamo is imported anyway: PyTorch's meta
    kernels, which the reference network's shape inference runs, import it.)"""
    script = ("import sys, torch, torch_trt\n"
              "compiled = torch_trt.compile(torch.nn.Linear(8, 8).eval(), inputs=[torch_trt.Input((2, 8))],\n"
              "                             min_block_size=1, require_full_compilation=True)\n"
              "compiled(torch.randn(2, 8))\n"
              "print(sorted(m for m in ('torch._inductor.compile_fx',) if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr
