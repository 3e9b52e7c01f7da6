"""The engine runner with TensorRT's runtime rules: threads, non-null output addresses, per-call errors, engine
lifetime tied to the modules holding it, device guards and streams (the CUDA ones skip without CUDA)."""

import gc
import io
import time
import weakref

import numpy as np
import pytest
import torch

import torch_trt
import torch_trt.targets.reference as trt
from threads import run_in_threads
from torch_trt.errors import EngineIOError
from torch_trt.runtime import engine_manager
from torch_trt.runtime.engine_manager import EngineRunner
from torch_trt.targets.target_logger import target_logger

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


class Model(torch.nn.Module):
    def __init__(self, scale=2.0):
        super().__init__()
        self.scale = scale  # a different scale gives a different engine

    def forward(self, x):
        return torch.relu(x * self.scale + 1).sum(1)


def _compile(device="cpu", scale=2.0):
    spec = torch_trt.Input(min_shape=(1, 16), opt_shape=(4, 16), max_shape=(16, 16))
    return torch_trt.compile(Model(scale).eval(), inputs=[spec], target="reference", device=device,
                             min_block_size=1, require_full_compilation=True)


def _engine_bytes(define, shape, device="cpu"):
    """Engine bytes of a reference network with one float input `input_0` of `shape`; define(net, x) -> output."""
    builder = trt.Builder(target_logger(trt))
    network = builder.create_network(0)
    x = network.add_input("input_0", trt.float32, shape)
    output = define(network, x)
    output.name = "output_0"
    network.mark_output(output)
    if torch.device(device).type == "cpu":
        for tensor in (x, output):
            tensor.location = trt.TensorLocation.HOST
    return bytes(builder.build_serialized_network(network, builder.create_builder_config()))


def test_eight_threads_call_one_module_with_different_batch_sizes():
    """One context serves every thread, so the runner's lock keeps shapes and addresses of concurrent calls apart."""
    compiled = _compile()
    inputs = [torch.randn(batch, 16) for batch in (1, 2, 3, 5, 7, 8, 13, 16)]
    results = {}

    def work(index):
        with torch.no_grad():
            results[index] = [compiled(inputs[index]) for _ in range(20)]

    errors = run_in_threads(work, len(inputs))
    assert not errors, errors
    for index, x in enumerate(inputs):
        for got in results[index]:
            torch.testing.assert_close(got, Model()(x))


class _AddressSpy:
    """Wraps an execution context, keeping the address bound to each tensor name."""

    def __init__(self, context):
        self._context, self.addresses = context, {}

    def set_tensor_address(self, name, memory):
        self.addresses[name] = memory
        return self._context.set_tensor_address(name, memory)

    def __getattr__(self, name):
        return getattr(self._context, name)


def test_an_empty_output_gets_a_non_null_address():
    """TensorRT refuses a null output address, which is what data_ptr() of an empty tensor is."""
    data = _engine_bytes(lambda n, x: n.add_slice(x, (0, 0), (2, 0), (1, 1)).get_output(0), (2, 3))
    runner = EngineRunner(data, "reference", torch.device("cpu"))
    runner.context = _AddressSpy(runner.context)
    (output,) = runner([torch.randn(2, 3)])
    assert output.shape == (2, 0)
    assert runner.context.addresses["output_0"] != 0


class _FailingContext(_AddressSpy):
    """An execution context whose every execution fails, reporting `failure <n>` to its error recorder."""

    def __init__(self, context):
        super().__init__(context)
        self.calls = 0

    def execute_async_v3(self, stream_handle):
        self.calls += 1
        self._context.error_recorder.report_error(trt.ErrorCodeTRT.FAILED_EXECUTION, f"failure {self.calls}")
        return False


def test_each_failed_call_reports_only_its_own_errors():
    data = _engine_bytes(lambda n, x: n.add_identity(x).get_output(0), (2, 3))
    runner = EngineRunner(data, "reference", torch.device("cpu"))
    runner.context = _FailingContext(runner.context)
    for expected in ("failure 1", "failure 2"):
        with pytest.raises(EngineIOError) as raised:
            runner([torch.randn(2, 3)])
        assert str(raised.value) == f"engine execution failed: {expected}"


def test_an_engine_stitched_in_this_process_is_loaded_without_hashing_it_again(monkeypatch):
    """Its id was computed from its bytes when it was stitched; a saved module's engine is checked when it loads."""
    checked = []
    monkeypatch.setattr(engine_manager, "_verify", lambda expected_id, data: checked.append(expected_id))
    compiled = _compile(scale=13.0)
    with torch.no_grad():
        compiled(torch.randn(3, 16))
    assert checked == []
    buffer = io.BytesIO()
    torch.jit.save(compiled, buffer)
    del compiled
    gc.collect()  # its runner goes with it, so the loaded module loads its engine again
    buffer.seek(0)
    with torch.no_grad():
        torch.jit.load(buffer)(torch.randn(3, 16))
    assert len(checked) == 1


def test_dropping_a_loaded_module_frees_its_engine():
    """A module loaded with torch.jit.load owns its graph: once it is gone, so are its engine and context."""
    buffer = io.BytesIO()
    torch.jit.save(_compile(scale=3.0), buffer)
    before = set(engine_manager._RUNNERS)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    with torch.no_grad():
        loaded(torch.randn(3, 16))
    added = set(engine_manager._RUNNERS) - before
    assert len(added) == 1
    del loaded
    gc.collect()
    assert not added & set(engine_manager._RUNNERS)


def _scaled(scale):
    return torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)).eval().requires_grad_(
        False).apply(lambda m: m.weight.mul_(scale) if isinstance(m, torch.nn.Linear) else None)


def _runners_added_while(run):
    """The keys of the runners `run()` loads (each test compiles its own weights, so its engines are new)."""
    before = set(engine_manager._RUNNERS)
    run()
    return set(engine_manager._RUNNERS) - before


def test_dropping_a_compiled_module_frees_its_engine():
    """TorchScript keeps the code of scripted and frozen modules for the life of the process; the compiled module's
    engines must not stay with it."""
    compiled = torch_trt.compile(torch.jit.script(_scaled(7.0)), inputs=[torch.randn(3, 16)], target="reference",
                                 device="cpu", min_block_size=1)
    added = _runners_added_while(lambda: compiled(torch.randn(3, 16)))
    assert len(added) == 1
    del compiled
    gc.collect()
    assert not added & set(engine_manager._RUNNERS)


def test_the_compiled_module_holds_the_engine_built_not_a_copy(monkeypatch):
    """The save/load round trip that gives a compiled module code of its own leaves the engines out: copying them
    through it took seconds for BERT-base and held a second host copy of the model while it ran."""
    from torch_trt.backend import pipeline

    stitched = []

    def spy(graph, segment, engine_bytes, target, device):
        call = stitch_engine(graph, segment, engine_bytes, target, device)
        stitched.append(call.inputsAt(1).node().t("value").data_ptr())
        return call

    stitch_engine = pipeline.stitch_engine
    monkeypatch.setattr(pipeline, "stitch_engine", spy)
    compiled = _compile()
    (call,) = compiled.graph.findAllNodes("torch_trt::execute_engine")
    assert [call.inputsAt(1).node().t("value").data_ptr()] == stitched
    x = torch.randn(5, 16)
    torch.testing.assert_close(compiled(x), Model()(x))


def test_dynamo_reset_frees_the_engines_and_the_weights_lent_them():
    eager = _scaled(11.0)
    model = torch.compile(eager, backend="tensorrt", options={"target": "reference", "device": "cpu"})
    added = _runners_added_while(lambda: model(torch.randn(3, 16)))
    assert len(added) == 1 and engine_manager._LENT
    weight = weakref.ref(eager[0].weight)
    del model, eager
    torch._dynamo.reset()
    gc.collect()
    assert not added & set(engine_manager._RUNNERS) and weight() is None


def test_two_modules_share_one_runner_until_both_are_gone():
    buffer = io.BytesIO()
    torch.jit.save(_compile(scale=5.0), buffer)
    before = {key: len(runner.owners) for key, runner in engine_manager._RUNNERS.items()}
    loaded = []
    for _ in range(2):
        buffer.seek(0)
        loaded.append(torch.jit.load(buffer))
        with torch.no_grad():
            loaded[-1](torch.randn(3, 16))
    (key,) = [k for k, r in engine_manager._RUNNERS.items() if len(r.owners) == before.get(k, 0) + 2]
    loaded.pop()
    gc.collect()
    assert key in engine_manager._RUNNERS
    loaded.pop()
    gc.collect()
    assert key not in engine_manager._RUNNERS


def test_runners_are_keyed_by_device():
    compiled = _compile()
    with torch.no_grad():
        compiled(torch.randn(2, 16))
    assert all(isinstance(key, tuple) and isinstance(key[1], torch.device) for key in engine_manager._RUNNERS)


@CUDA
def test_engine_runs_on_its_device_whatever_the_current_device():
    """Compiled on cuda:0, called while another device (or a second context on one GPU) is current."""
    compiled = _compile("cuda:0")
    x = torch.randn(4, 16, device="cuda:0")
    other = 1 if torch.cuda.device_count() > 1 else 0
    with torch.cuda.device(other), torch.no_grad():
        torch.testing.assert_close(compiled(x), Model()(x))


class _StreamSpy(_AddressSpy):
    """Keeps the stream handle of each execution."""

    def __init__(self, context):
        super().__init__(context)
        self.streams = []

    def execute_async_v3(self, stream_handle):
        self.streams.append(stream_handle)
        return self._context.execute_async_v3(stream_handle)


@CUDA
def test_uncaptured_calls_enqueue_on_the_side_stream():
    """Whatever the caller's stream, uncaptured calls run in order on the engines' side stream (never the legacy default one, where
    TensorRT adds device synchronizations), ordered with the caller's work."""
    data = _engine_bytes(lambda n, x: n.add_activation(x, trt.ActivationType.RELU).get_output(0), (2, 3), "cuda")
    runner = EngineRunner(data, "reference", torch.device("cuda", torch.cuda.current_device()))
    runner.graphs.capturable = False  # so each call enqueues
    runner.context = _StreamSpy(runner.context)
    streams = runner.context.streams
    x = torch.randn(2, 3, device="cuda")
    with torch.cuda.stream(torch.cuda.default_stream()):
        (on_default,) = runner([x])
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        (on_side,) = runner([x])
    torch.cuda.synchronize()
    assert streams == [runner.stream.cuda_stream] * 2 and runner.stream.cuda_stream != 0
    torch.testing.assert_close(on_default, torch.relu(x))
    torch.testing.assert_close(on_side, torch.relu(x))


@CUDA
def test_warm_up_runs_on_the_side_stream_and_capture_on_the_capture_stream():
    """Warm-up enqueues on the engines' side stream (every other stream a call runs on gets a cuBLAS workspace of its
    own, 32 MiB on an H100, held for the life of the process); the capture on the device's capture stream, which
    nothing else enqueues on (a capture takes in whatever is enqueued on its stream)."""
    data = _engine_bytes(lambda n, x: n.add_activation(x, trt.ActivationType.RELU).get_output(0), (2, 3), "cuda")
    runner = EngineRunner(data, "reference", torch.device("cuda", torch.cuda.current_device()))
    runner.context = _StreamSpy(runner.context)
    x = torch.randn(2, 3, device="cuda")
    runner([x])  # warms up and captures
    (replayed,) = runner([x])
    torch.cuda.synchronize()
    capture_stream = runner.graphs.shared.capture_stream
    assert runner.context.streams == [runner.stream.cuda_stream, capture_stream.cuda_stream]  # the replay enqueues none
    assert capture_stream not in (runner.stream, torch.cuda.default_stream())
    torch.testing.assert_close(replayed, torch.relu(x))


def _matrix_product_engine(device, rows=16, depth=16384, columns=16):
    """A runner for x @ W with a long inner dimension, which cuBLAS splits over its workspace; and W."""
    weight = (np.random.rand(depth, columns) - 0.5).astype(np.float32)
    data = _engine_bytes(lambda n, x: n.add_matrix_multiply(
        x, trt.MatrixOperation.NONE, n.add_constant((depth, columns), weight).get_output(0),
        trt.MatrixOperation.NONE).get_output(0), (rows, depth), "cuda")
    return EngineRunner(data, "reference", device), torch.from_numpy(weight).to(device)


def _float64_product(x, weight):
    """x @ weight in float64: float32 sums of 16384 terms in cuBLAS's order and in another differ by about 1e-2."""
    return (x.double() @ weight.double()).float()


def _workspace_bytes(device):
    """The bytes of the cuBLAS workspace a stream gets at its first matrix product."""
    torch._C._cuda_clearCublasWorkspaces()
    a = torch.randn(64, 64, device=device)
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    with torch.cuda.stream(torch.cuda.Stream(device)):
        a @ a
    torch.cuda.synchronize(device)
    return torch.cuda.memory_allocated(device) - before - a.nbytes


@CUDA
def test_a_first_call_and_serving_hold_one_cublas_workspace_at_a_time(fresh_dynamo):
    """Compiling runs cuBLAS on the caller's stream, warm-ups on the side stream and the capture on the capture
    stream: each workspace is dropped before the next is made, so a first call peaks with one, and serving holds only
    the one the graph reads."""
    device = torch.device("cuda", torch.cuda.current_device())
    workspace = _workspace_bytes(device)
    weight = np.random.rand(64, 64).astype(np.float32)
    data = _engine_bytes(lambda n, x: n.add_matrix_multiply(
        x, trt.MatrixOperation.NONE, n.add_constant((64, 64), weight).get_output(0),
        trt.MatrixOperation.NONE).get_output(0), (64, 64), "cuda")
    runner = EngineRunner(data, "reference", device)
    x = torch.randn(64, 64, device=device)
    x @ x  # the workspace compiling leaves on the caller's stream
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    runner([x])  # warms up and captures
    peak = torch.cuda.max_memory_allocated(device) - before
    (replayed,) = runner([x])
    torch.cuda.synchronize(device)
    added = torch.cuda.memory_allocated(device) - before - replayed.nbytes
    assert workspace >= 2 ** 20 and added < workspace / 2, f"{added} bytes added; a workspace is {workspace}"
    assert peak < workspace / 2, f"the first call peaked {peak} bytes above; a workspace is {workspace}"
    torch.testing.assert_close(replayed, x @ torch.from_numpy(weight).to(device), atol=1e-2, rtol=1e-2)


@CUDA
def test_engines_on_one_device_share_one_side_stream():
    """A stream per engine held a cuBLAS workspace per engine: 32 MiB each on an H100, for a model split in ten
    engines 320 MiB."""
    device = torch.device("cuda", torch.cuda.current_device())
    relu = _engine_bytes(lambda n, x: n.add_activation(x, trt.ActivationType.RELU).get_output(0), (2, 3), "cuda")
    sigmoid = _engine_bytes(lambda n, x: n.add_activation(x, trt.ActivationType.SIGMOID).get_output(0), (2, 3),
                            "cuda")
    first, second = EngineRunner(relu, "reference", device), EngineRunner(sigmoid, "reference", device)
    assert first.stream is second.stream and first.stream != torch.cuda.default_stream(device)


@CUDA
def test_a_captured_shape_replays_on_the_callers_stream_after_the_last_call():
    """A replay does not switch streams (it costs host time on every call); it waits for the last call, made on
    another stream, since both use the graph's buffers."""
    data = _engine_bytes(lambda n, x: n.add_activation(x, trt.ActivationType.RELU).get_output(0), (2, 3), "cuda")
    runner = EngineRunner(data, "reference", torch.device("cuda", torch.cuda.current_device()))
    x, y = torch.randn(2, 3, device="cuda"), torch.randn(2, 3, device="cuda")
    runner([x])  # warms up and captures
    torch.cuda.synchronize()
    first, second = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(first):
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU time before the first caller's replay
        (on_first,) = runner([x])
    assert runner.stream.query(), "the replay was enqueued on the side stream"
    with torch.cuda.stream(second):
        (on_second,) = runner([y])
        second_done = second.record_event()
    assert not second_done.query(), "the second caller's replay did not wait for the first's"
    torch.cuda.synchronize()
    torch.testing.assert_close(on_first, torch.relu(x))
    torch.testing.assert_close(on_second, torch.relu(y))


def _second_call_waits_for_the_first(first, second):
    """Call `first` on one stream behind half a second of GPU work, then `second` on another stream; whether the
    second call was still waiting 50 ms later (ample for it alone), and both calls' outputs, after both ended. Each of
    `first` and `second` is (runner, weight) of _matrix_product_engine, called once before so neither compiles."""
    device = first[0].device
    x, y = torch.randn(16, 16384, device=device), torch.randn(16, 16384, device=device)
    one, another = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(one):
        torch.cuda._sleep(1_000_000_000)
        (on_one,) = first[0]([x])
    with torch.cuda.stream(another):
        (on_another,) = second[0]([y])
        another_done = another.record_event()
    time.sleep(0.05)
    waited = not another_done.query()
    torch.cuda.synchronize()
    torch.testing.assert_close(on_one, _float64_product(x, first[1]), atol=0.05, rtol=1e-3)
    torch.testing.assert_close(on_another, _float64_product(y, second[1]), atol=0.05, rtol=1e-3)
    return waited


def _warmed_up(engine):
    """`engine` ((runner, weight)) after one call: captured, or for an uncapturable runner its code generated."""
    engine[0]([torch.randn(16, 16384, device=engine[0].device)])
    torch.cuda.synchronize()
    return engine


@CUDA
def test_replays_of_two_engines_on_two_streams_run_one_at_a_time():
    """The device's graphs share one memory pool and one cuBLAS workspace: a replay on one stream while another
    engine's replay runs on another would write into the memory that one reads."""
    device = torch.device("cuda", torch.cuda.current_device())
    first, second = _warmed_up(_matrix_product_engine(device)), _warmed_up(_matrix_product_engine(device))
    assert _second_call_waits_for_the_first(first, second), "the second engine's replay did not wait for the first's"


@CUDA
def test_captured_graphs_survive_another_library_dropping_the_cublas_workspaces():
    """Inductor's CUDA graphs drop every stream's cuBLAS workspace before each capture. The workspace our graphs read
    lives in their own memory pool, so what is allocated after the drop never gets it and the graphs' cuBLAS
    calls write into no one's tensors."""
    device = torch.device("cuda", torch.cuda.current_device())
    runner, weight = _matrix_product_engine(device)
    x = torch.randn(16, 16384, device=device)
    runner([x])  # warms up and captures
    torch.cuda.synchronize()
    torch._C._cuda_clearCublasWorkspaces()
    guards = []
    for stream in (runner.stream, torch.cuda.current_stream()):  # freed memory goes back to the stream it was used on
        with torch.cuda.stream(stream):
            guards += [torch.full((2 ** 20,), 7.0, device=device) for _ in range(32)]  # 128 MiB in 4 MiB blocks
    for _ in range(4):
        (replayed,) = runner([x])
    torch.cuda.synchronize()
    assert all(bool((guard == 7.0).all()) for guard in guards), "a graph wrote into memory allocated after the drop"
    torch.testing.assert_close(replayed, _float64_product(x, weight), atol=0.05, rtol=1e-3)


@CUDA
def test_an_uncaptured_call_waits_for_another_engines_replay_on_another_stream():
    """Calls that are not replays (engines that cannot be captured, shapes past MAX_GRAPHS) join the device's chain
    of calls too: each engine's calls, and every graph of the device, run one at a time."""
    device = torch.device("cuda", torch.cuda.current_device())
    captured, uncaptured = _matrix_product_engine(device), _matrix_product_engine(device)
    uncaptured[0].graphs.capturable = False
    captured, uncaptured = _warmed_up(captured), _warmed_up(uncaptured)
    assert _second_call_waits_for_the_first(captured, uncaptured), \
        "the uncaptured call did not wait for the other engine's replay"
