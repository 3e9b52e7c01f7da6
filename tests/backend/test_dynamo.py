"""torch.compile(backend="tensorrt"): registration, options, failures, dynamic shapes and the engine cache."""

import copy
import gc
import logging
import math
import subprocess
import sys
import textwrap
import threading

import pytest
import sympy
import torch
from torch import nn

from dynamo_harness import REFERENCE, check_compiled, engine_calls


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 16), nn.Linear(16, 3)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x)))) * 2


class SharedInput(nn.Module):
    """Three linear layers reading one input, as attention's query, key and value projections do."""

    def __init__(self):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(4, 8), nn.Linear(4, 8), nn.Linear(4, 8)

    def forward(self, x):
        return self.query(x) * self.key(x) + self.value(x)


def batches(*sizes, width=4):
    return [(torch.randn(size, width),) for size in sizes]


def test_registered_through_the_entry_point_without_importing_torch_trt():
    script = textwrap.dedent("""
        import sys, torch
        assert {"tensorrt", "torch_trt"} <= set(torch._dynamo.list_backends())
        assert "torch_trt" not in sys.modules
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).eval()
        x = torch.randn(3, 4)
        out = torch.compile(model, backend="tensorrt", options={"target": "reference", "min_block_size": 1})(x)
        torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
        from torch_trt.backend import engine_cache
        assert engine_cache._entries, "no engine was built"
    """)
    # not recorded: the recorder imports torch_trt, which this process must do only through the entry point
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]


def test_matches_eager_and_runs_an_engine(builds, device):
    check_compiled(MLP().eval(), batches(5), device=device)
    assert len(builds) == 1 and engine_calls(builds) == 1


def test_options_can_also_come_as_keyword_arguments_and_mode_is_ignored(builds):
    from torch_trt.backend.dynamo import tensorrt_backend

    model, x = MLP().eval(), torch.randn(2, 4)
    compiled = torch.compile(model, backend=lambda gm, inputs: tensorrt_backend(gm, inputs, mode="max-autotune",
                                                                                  **REFERENCE))
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert len(builds) == 1


def test_runs_under_inference_mode(builds):
    model = MLP().eval()
    with torch.inference_mode():
        check_compiled(model, batches(3, 3))
    assert len(builds) == 1 and engine_calls(builds) == 1


def test_unknown_option_is_an_error_that_lists_the_valid_ones():
    compiled = torch.compile(MLP(), backend="tensorrt", options={"not_an_option": 1})
    with pytest.raises(Exception, match=r"(?s)unknown torch_trt option\(s\) \['not_an_option'\].*dynamic_shape_max"):
        compiled(torch.randn(2, 4))


def test_a_graph_that_cannot_compile_warns_and_runs_in_pytorch(builds, caplog):
    options = {"torch_executed_ops": {"aten::relu"}, "require_full_compilation": True}
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        check_compiled(MLP().eval(), batches(2, 2), options)
    assert builds == []
    assert "runs in PyTorch" in caplog.text and "aten::relu" in caplog.text


def test_pass_through_build_failures_raises():
    options = {**REFERENCE, "torch_executed_ops": {"aten::relu"}, "require_full_compilation": True,
               "pass_through_build_failures": True}
    compiled = torch.compile(MLP().eval(), backend="tensorrt", options=options)
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="aten::relu"):
        compiled(torch.randn(2, 4))


def test_a_bug_in_the_backend_surfaces_instead_of_running_in_pytorch(monkeypatch):
    from torch_trt.backend import dynamo

    def broken_pipeline(*args):
        raise ZeroDivisionError("a bug in the pipeline")

    monkeypatch.setattr(dynamo, "compile_frozen", broken_pipeline)
    compiled = torch.compile(MLP().eval(), backend="tensorrt", options=REFERENCE)
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="a bug in the pipeline"):
        compiled(torch.randn(2, 4))


def test_a_bug_while_rebuilding_surfaces(builds, monkeypatch):
    from torch_trt.backend import dynamo

    compiled = check_compiled(MLP().eval(), batches(7), {"dynamic_shape_max": 16}, dynamic=True)
    monkeypatch.setattr(dynamo, "compile_frozen", lambda *args: 1 / 0)
    with torch.no_grad(), pytest.raises(ZeroDivisionError):
        compiled(torch.randn(40, 4))  # outside the engine's range: the graph is rebuilt, not recompiled by dynamo
    assert len(builds) == 1


@pytest.fixture
def without_tensorrt(monkeypatch):
    """`import tensorrt` fails, whatever this machine has installed."""
    from torch_trt.targets import resolve_target, tensorrt

    monkeypatch.setattr(tensorrt, "load", lambda: None)
    resolve_target.cache_clear()
    yield
    resolve_target.cache_clear()


def test_target_tensorrt_without_tensorrt_raises_as_the_torchscript_path_does(without_tensorrt, builds):
    import torch_trt

    with pytest.raises(Exception, match="target='tensorrt'") as torchscript_error:  # no TensorRT here, or no CUDA
        torch_trt.compile(MLP().eval(), inputs=[torch.randn(2, 4)], target="tensorrt")
    compiled = torch.compile(MLP().eval(), backend="tensorrt", options={"target": "tensorrt"})
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as dynamo_error:
        compiled(torch.randn(2, 4))
    assert str(torchscript_error.value) in str(dynamo_error.value)
    assert builds == []


def test_option_of_the_wrong_type_raises_through_torch_compile():
    compiled = torch.compile(MLP(), backend="tensorrt", options={"enabled_precisions": torch.float16})
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="enabled_precisions must be a set of dtypes"):
        compiled(torch.randn(2, 4))


def test_training_mode_runs_in_pytorch(builds, caplog):
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8)).train()
    twin, x = copy.deepcopy(model), torch.randn(6, 4)
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        out = torch.compile(model, backend="tensorrt", options=REFERENCE)(x)
    torch.testing.assert_close(out, twin(x))
    torch.testing.assert_close(model[1].running_mean, twin[1].running_mean)
    assert builds == [] and "training mode" in caplog.text


class HalvesItsWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            self.fc.weight.mul_(0.5)
        return self.fc(x)


class WritesARowOfItsBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(3, 4))

    def forward(self, x):
        self.seen[0] = x.sum(0)
        return x * 2


@pytest.mark.parametrize("make", [HalvesItsWeight, WritesARowOfItsBuffer])
def test_a_graph_writing_its_weights_runs_in_pytorch_and_writes_them_once_a_call(make, builds):
    """The build traced the graph on the parameters themselves before refusing it: each compile halved the weight
    once more (0.0625 of it after three calls, eager 0.125)."""
    model, twin = make().eval(), make().eval()
    twin.load_state_dict(model.state_dict())
    compiled, x = torch.compile(model, backend="tensorrt", options=REFERENCE), torch.randn(2, 4)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), twin(x))
    for ours, theirs in zip(model.state_dict().values(), twin.state_dict().values()):
        torch.testing.assert_close(ours, theirs)
    assert builds == []


class StandardizesItsWeight(nn.Module):
    """BiT's weight-standardized convolution: a batch norm with no running statistics, a function of its input."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        weight = nn.functional.batch_norm(self.conv.weight.reshape(1, 8, -1), None, None, training=True, eps=1e-6)
        return torch.relu(nn.functional.conv2d(x, weight.reshape_as(self.conv.weight), self.conv.bias))


def test_a_batch_norm_without_running_statistics_compiles_in_eval_mode(builds):
    """It was refused as a training-mode op ("call model.eval()" for a model in eval mode): nothing compiled."""
    check_compiled(StandardizesItsWeight().eval(), [[torch.randn(2, 3, 8, 8)]])
    assert engine_calls(builds) == 1


def test_a_graph_writing_into_its_input_runs_in_pytorch(builds):
    class AddInPlace(nn.Module):
        def forward(self, x):
            x.mul_(2)
            return x + 1

    x = torch.randn(3, 4)
    expected_x = x * 2
    out = torch.compile(AddInPlace(), backend="tensorrt", options=REFERENCE)(x)
    torch.testing.assert_close(x, expected_x)
    torch.testing.assert_close(out, expected_x + 1)
    assert builds == []


def test_debug_logs_the_fx_and_torchscript_graphs(caplog):
    with caplog.at_level(logging.INFO, logger="torch_trt"):
        check_compiled(MLP().eval(), batches(2), {"debug": True})
    assert "FX graph from dynamo" in caplog.text and "TorchScript graph traced from the FX graph" in caplog.text


def test_dynamic_batch_builds_one_engine(builds):
    check_compiled(MLP().eval(), batches(7, 32, 1), dynamic=True)
    assert len(builds) == 1  # batch 1, which dynamo specializes to a static graph, reuses the dynamic engine
    (spec,), _ = builds[0]
    assert (spec.min_shape, spec.opt_shape, spec.max_shape) == ((1, 4), (7, 4), (64, 4))


def test_mark_dynamic_batch_builds_one_engine(builds):
    calls = batches(7, 32, 20)
    for (x,) in calls:
        torch._dynamo.mark_dynamic(x, 0, min=2, max=40)
    check_compiled(MLP().eval(), calls)
    assert len(builds) == 1
    (spec,), _ = builds[0]
    assert (spec.min_shape, spec.opt_shape, spec.max_shape) == ((1, 4), (7, 4), (40, 4))


class ScalesAndDropsTheLastTwo(nn.Module):
    def forward(self, x):
        return x * 2, x[:, :-2]  # the slice views the argument: the signature asks whether it is all of its memory


@pytest.mark.parametrize("bounds", [{}, {"min": 3, "max": 9}], ids=["unbounded", "bounded"])
def test_a_marked_dim_is_not_specialized_by_the_results_layout(bounds):
    """Asking whether x[:, :-2] owns its memory guarded its size to 1, so dynamo failed the compile: 'you marked
    L['x'].size()[1] as dynamic but your code specialized it to be a constant (3)'."""
    calls = [[torch.randn(2, width, 4)] for width in (3, 5, 8)]
    for (x,) in calls:
        torch._dynamo.mark_dynamic(x, 1, **bounds)
    compiled = check_compiled(ScalesAndDropsTheLastTwo().eval(), calls)
    x = calls[-1][0]
    assert compiled(x)[1].data_ptr() == x.data_ptr()  # made again as the view it is in eager


def test_unbacked_batch_from_one_builds_one_engine(builds):
    calls = batches(1, 7, 32)
    for (x,) in calls:
        torch._dynamo.decorators.mark_unbacked(x, 0)
    check_compiled(MLP().eval(), calls)
    assert len(builds) == 1


def test_dynamic_shape_max_bounds_dims_and_larger_inputs_widen_the_range(builds):
    check_compiled(MLP().eval(), batches(7, 12, 40), {"dynamic_shape_max": 16}, dynamic=True)
    assert [specs[0].max_shape for specs, _ in builds] == [(16, 4), (40, 4)]


class ScaleBySqrtOfBatch(nn.Module):
    def forward(self, x):
        return torch.relu(x) / math.sqrt(x.shape[0])


def test_size_dependent_trace_gets_one_engine_per_shape(builds, caplog):
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        check_compiled(ScaleBySqrtOfBatch(), batches(4, 9, 4), dynamic=True)
    assert [specs[0].max_shape for specs, _ in builds] == [(4, 4), (9, 4)]
    assert "traces differently at other input sizes" in caplog.text


class ScaleByParityOfBatch(nn.Module):
    def forward(self, x):
        return torch.relu(x) * float(x.shape[0] % 2)  # traces the same at batch 1 and 3, not at 4


def test_a_trace_that_matches_at_size_1_by_chance_still_gets_one_engine_per_shape(builds):
    """The size-1 trace alone matched the first call's (1 % 2 == 3 % 2): one dynamic engine scaled every batch by 1."""
    check_compiled(ScaleByParityOfBatch(), batches(3, 4, 5), dynamic=True)
    assert [specs[0].max_shape for specs, _ in builds] == [(3, 4), (4, 4), (5, 4)]


class RollByHalfTheWidth(nn.Module):
    def forward(self, x):
        return x.roll(x.size(1) // 2, 1) + torch.full((1,), float(x.size(1) // 4))


def test_a_size_value_that_the_next_size_leaves_equal_is_checked_at_another(builds):
    """The trace records roll's shift and full's value as constants, and x.size(1) // 2 is 4 at widths 8 and 9:
    the only other trace was at 9, so one dynamic engine rolled every width by 4 and filled 2.0."""
    rows = lambda width: torch.arange(2 * width, dtype=torch.float32).reshape(2, width)  # noqa: E731
    check_compiled(RollByHalfTheWidth(), [[rows(8)], [rows(10)], [rows(13)]], dynamic=True)
    assert [specs[0].max_shape for specs, _ in builds] == [(2, 8), (2, 10), (2, 13)]


class OnesWhereWidthsMatch(nn.Module):
    def forward(self, x, y):
        return y * float(x.size(1) == y.size(1))


def test_a_per_shape_engine_from_the_cache_keeps_its_own_shape():
    """The per-shape trace at widths (3, 3) was the text of the first graph's dynamic engine (y * 1), and the cache
    hit brought that engine's ranges: widths (3, 7) ran it and gave y, not 0."""
    check_compiled(OnesWhereWidthsMatch(), [[torch.randn(2, a), torch.randn(2, b)]
                                            for a, b in [(2, 2), (2, 3), (3, 3), (3, 7), (3, 8)]], dynamic=True)


class OnesAtWidth512(nn.Module):
    def forward(self, x):
        return x * float(x.size(1) == 512)


@pytest.mark.parametrize("widths", [(4, 5, 512, 513), (4, 600, 512)], ids=["widened_to_512", "widened_past_512"])
def test_a_rebuild_for_a_wider_range_checks_the_trace_again_at_the_sizes_it_compares_with(widths):
    """The size check ran at the first build only, at sizes up to 64: the rebuild for 512 (or 600) widened the engine
    with the constant traced there, and every other width got it."""
    check_compiled(OnesAtWidth512(), [[torch.randn(1, width)] for width in widths], dynamic=True)


class SumsRowsIntoALiteral(nn.Module):
    def forward(self, xs):
        total = torch.tensor(0.0)
        for i in range(xs.shape[0]):
            total += xs[i].sum()
        return total


class DoublesALiteral(nn.Module):
    def forward(self, x):
        a = x.new_tensor([1.0, 2.0, 3.0])
        a.mul_(2)
        return x + a


@pytest.mark.parametrize("model", [SumsRowsIntoALiteral(), DoublesALiteral()], ids=lambda m: type(m).__name__)
def test_a_tensor_literal_written_in_place_is_a_tensor_of_its_own_per_call(model):
    """The trace records torch.tensor(0.0) as a constant: += wrote the one tensor every call shared (9, then 15.3,
    then 24.3 for a sum of 9), and a doubled literal came out quadrupled."""
    compiled = torch.compile(model, backend="tensorrt", options=REFERENCE)
    x = torch.ones(3, 3)
    results = [compiled(x) for _ in range(3)]
    for result in results:
        torch.testing.assert_close(result, model(x))
    assert results[0] is not results[1]


def test_as_tensor_of_an_input_stays_that_input(builds):
    """torch.as_tensor of a tensor is the tensor: a write through it is the caller's, which an engine cannot make."""
    def adds_one_to(x):
        y = torch.as_tensor(x)
        y.add_(1)
        return y * 2

    x = torch.zeros(3)
    result = torch.compile(adds_one_to, backend="tensorrt", options=REFERENCE)(x)
    assert torch.equal(x, torch.ones(3)) and torch.equal(result, torch.full((3,), 2.0)) and builds == []


def _two_views_of_an_intermediate(x):
    y = x + 1
    return y.t(), y[0]


def test_results_viewing_one_intermediate_stay_views_of_one_tensor(builds):
    """y.t() and y[0] of an intermediate y came back as two copies: a write through one after a graph break did not
    reach the other."""
    compiled = torch.compile(_two_views_of_an_intermediate, backend="tensorrt", options=REFERENCE)
    transposed, first_row = compiled(torch.randn(4, 5))
    first_row.mul_(0)
    assert engine_calls(builds) == 1 and torch.equal(transposed[:, 0], torch.zeros(5))
    assert transposed.untyped_storage().data_ptr() == first_row.untyped_storage().data_ptr()


def _plus_one_and_first_column(x):
    return x + 1, x[:, 0]


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_result_viewing_an_argument_views_this_calls_argument_at_its_own_storage_offset(dynamic, builds):
    """Dynamo compiles no graph again for an argument at another storage offset (a slice of a batch): the view was
    made at the first call's offset, reading the row before this call's argument."""
    compiled = torch.compile(_plus_one_and_first_column, backend="tensorrt", dynamic=dynamic, options=REFERENCE)
    compiled(-torch.arange(12.0).reshape(4, 3))
    sliced = torch.arange(15.0).reshape(5, 3)[1:]
    _, first_column = compiled(sliced)
    assert engine_calls(builds) == 1
    assert torch.equal(first_column, sliced[:, 0]) and first_column.data_ptr() == sliced.data_ptr()


class MultipliesAnInput(nn.Module):
    def forward(self, x, y):
        input = x + 1  # traced as %input_1, the name of the engine's second input
        return input * y


def test_an_intermediate_named_like_an_engine_input_is_not_taken_for_it():
    """The tensor of %input_1 was named input_1, the engine's input for y, and the program read y as x + 1."""
    check_compiled(MultipliesAnInput(), [[torch.randn(3), torch.randn(3)]])


def test_sizes_and_constants_among_the_results(builds):
    class WithSizes(nn.Module):
        def forward(self, x):
            return torch.relu(x), x.shape[0] * 2, None

    compiled = check_compiled(WithSizes(), batches(3, 5), dynamic=True)
    assert compiled(torch.randn(6, 4))[1:] == (12, None)
    assert len(builds) == 1


def test_a_python_int_argument_is_baked_and_rebuilt_when_it_changes(builds):
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, k: int):
            return torch.relu(self.fc(x)) * k

    check_compiled(Scale().eval(), [(torch.randn(3, 4), k) for k in (3, 5, 5, 3)], dynamic=True)
    assert len(builds) == 2


def test_same_graph_and_weights_twice_builds_once_until_dynamo_resets(builds):
    model = MLP().eval()
    check_compiled(model, batches(5))
    torch._dynamo.reset_code_caches()  # dynamo traces the model again; torch_trt's cache still holds its engine
    check_compiled(model, batches(5))
    assert len(builds) == 1
    torch._dynamo.reset()
    check_compiled(model, batches(5))
    assert len(builds) == 2


def _read_in_place_by_new_engines(compile_model):
    """The storage addresses of the weights that the reference engines built by `compile_model()` read."""
    from torch_trt.runtime import engine_manager

    gc.collect()
    earlier = set(engine_manager._RUNNERS)
    compile_model()
    runners = [runner for key, runner in engine_manager._RUNNERS.items() if key not in earlier]
    assert runners
    return {p.untyped_storage().data_ptr() for runner in runners for p in runner.engine._module.parameters()}


@pytest.mark.unrecorded  # reads the reference engine's program, which TensorRT's engines do not have
@pytest.mark.parametrize("model_class", [MLP, SharedInput])
def test_the_engines_read_the_model_weights_in_place(device, model_class):
    """The baked weights are lent to the engines (engine_manager.lend): on a GPU each is held once, not twice. Linear
    layers sharing an input are not concatenated into a new weight, as TorchScript's freezing does on CUDA."""
    model = model_class().eval()
    read = _read_in_place_by_new_engines(lambda: check_compiled(model, batches(5), device=device))
    assert all(p.untyped_storage().data_ptr() in read for p in model.parameters())


def _convolution_then_batch_norm():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU()).eval()
    with torch.no_grad():  # statistics of a trained network, so that folding changes the weights
        model[1].running_var.uniform_(0.5, 2.0)
        model[1].running_mean.uniform_(-1.0, 1.0)
    return model


@pytest.mark.parametrize("fold", [False, True], ids=["gpu-engines", "cpu-engines"])
def test_the_trace_keeps_a_batch_norm_unless_its_engines_run_on_the_cpu(fold):
    """fx_to_script._freeze: for GPU engines the batch norm stays, so that the engine reads the model's kernel;
    for CPU engines it is folded into a kernel of the frozen graph's own."""
    from torch_trt.backend.fx_to_script import _freeze

    traced = torch.jit.trace(_convolution_then_batch_norm(), torch.randn(1, 3, 8, 8))
    assert bool(_freeze(traced, fold).graph.findAllNodes("aten::batch_norm")) is not fold


@pytest.mark.unrecorded
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: on the CPU batch norms are folded")
def test_on_a_gpu_a_batch_norm_is_not_folded_into_the_convolution_it_follows():
    """Folded, the convolution's kernel and bias would be new tensors, a second copy of them beside the model's for
    the engine's life (fx_to_script._freeze): the engine reads the model's in place and scales after."""
    model = _convolution_then_batch_norm()
    read = _read_in_place_by_new_engines(lambda: check_compiled(
        model, [(torch.randn(2, 3, 16, 16),)], options={"min_block_size": 1}, device="cuda"))
    assert all(p.untyped_storage().data_ptr() in read for p in model[0].parameters())


def test_on_the_cpu_weights_that_freezing_folds_are_read_in_place_too(caplog):
    """On the CPU freezing folds the batch norm into the convolution's weights (fx_to_script._freeze): new tensors of
    the frozen graph, which only the engine will hold, so they are lent with the baked ones rather than copied."""
    with caplog.at_level(logging.INFO, logger="torch_trt"):
        check_compiled(_convolution_then_batch_norm(), [(torch.randn(2, 3, 16, 16),)], options={"min_block_size": 1})
    assert "2 of its 2 weights" in caplog.text, caplog.text


def test_another_model_with_equal_weights_gets_engines_reading_its_own(builds, device):
    """Engines read the weights lent them in place (engine_manager.lend): one model's engines must not serve another
    with equal weights, whose calls would not see writes to the first model's tensors."""
    model = MLP().eval()
    twin = copy.deepcopy(model)
    check_compiled(model, batches(5), device=device)
    compiled_twin = check_compiled(twin, batches(5), device=device)
    assert len(builds) == 2
    with torch.no_grad():
        model.fc1.weight.mul_(-1)
    x = torch.randn(5, 4, device=device)
    with torch.no_grad():
        torch.testing.assert_close(compiled_twin(x), twin(x), rtol=1e-4, atol=1e-4)


def test_other_weights_build_another_engine(builds):
    check_compiled(MLP().eval(), batches(5))
    check_compiled(MLP().eval(), batches(5))
    assert len(builds) == 2


def test_the_weights_digest_leaves_the_lent_tensors_to_their_identity_and_version():
    """The engine cache keys lent tensors by identity and version (every write bumps it): their bytes, most of a
    model's, are not hashed again on each build, while every other constant's are."""
    from torch_trt.backend.fx_to_script import constants_digest

    lent, other = torch.randn(4), torch.randn(4)
    graph = torch.jit.trace(lambda x: x * lent + other, torch.randn(4)).graph
    before, whole = constants_digest(graph, known=[lent]), constants_digest(graph)
    with torch.no_grad():
        lent.mul_(2)
    assert constants_digest(graph, known=[lent]) == before and constants_digest(graph) != whole
    with torch.no_grad():
        other.mul_(2)
    assert constants_digest(graph, known=[lent]) != before


def test_weights_changed_after_compiling_rebuild_the_engine(builds):
    model = MLP().eval()
    compiled = check_compiled(model, batches(5))
    with torch.no_grad():
        model.fc1.weight.mul_(-1)
    x = torch.randn(5, 4)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert len(builds) == 2


def test_the_engine_cache_forgets_engines_whose_weights_were_written_since(builds, fresh_dynamo):
    """A model evaluated between updates of its weights would otherwise keep every engine it ever had."""
    from torch_trt.backend import engine_cache

    model = MLP().eval()
    compiled = torch.compile(model, backend="tensorrt", options=REFERENCE)
    x = torch.randn(5, 4)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
            model.fc1.weight.mul_(1.5)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert (len(builds), len(engine_cache._entries)) == (4, 1)


def test_the_weights_are_checked_after_the_engine_is_called(monkeypatch):
    """Checking hundreds of weights runs while the engine's GPU work does, instead of delaying its start."""
    from torch_trt.backend import dynamo

    model = MLP().eval()
    compiled, graphs = _compiled_graphs(model, {"min_block_size": 1})
    (x,) = batches(4)[0]
    with torch.no_grad():
        compiled(x)
        events = []
        (variant,) = graphs[-1].current.variants
        engine_call = variant._replace(call=lambda *inputs: events.append("engine") or variant.call(*inputs))
        graphs[-1].current = graphs[-1].current._replace(variants=[engine_call])
        monkeypatch.setattr(dynamo.BakedArguments, "changed", lambda self, args: events.append("check") or False)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert events == ["engine", "check"]


def test_a_replaced_weight_rebuilds_the_engine(builds):
    model = MLP().eval()
    compiled = check_compiled(model, batches(5))
    model.fc2.weight = nn.Parameter(torch.randn(3, 16), requires_grad=False)
    x = torch.randn(5, 4)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert len(builds) == 2


@pytest.fixture
def traces(monkeypatch):
    """One entry per trace of an FX graph to TorchScript that the dynamo backend makes."""
    from torch_trt.backend import dynamo

    calls, trace_frozen = [], dynamo.trace_frozen
    monkeypatch.setattr(dynamo, "trace_frozen", lambda *args, **kwargs: calls.append(1) or trace_frozen(*args, **kwargs))
    return calls


def test_two_instances_of_a_module_keep_their_own_engines(builds, traces, caplog):
    """Dynamo gives both instances one graph whose weights are arguments: switching between them reuses each one's
    engines instead of tracing again and warning of a changed weight."""
    first, second = MLP().eval(), MLP().eval()
    compiled_first, compiled_second = (torch.compile(m, backend="tensorrt", options=REFERENCE) for m in (first, second))
    x = torch.randn(5, 4)
    with torch.no_grad(), caplog.at_level(logging.WARNING, logger="torch_trt"):
        for _ in range(3):
            torch.testing.assert_close(compiled_first(x), first(x), rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(compiled_second(x), second(x), rtol=1e-4, atol=1e-4)
    assert (len(builds), len(traces)) == (2, 2)
    assert "rebuilding" not in caplog.text


def test_a_call_checks_its_arguments_against_the_set_whose_engine_it_ran():
    """Another thread may switch the graph to another instance's engines while a call runs: the call must not check
    its weights against that set after running the engine of the set it read."""
    from torch_trt.backend.dynamo import tensorrt_backend

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(tensorrt_backend(gm, example_inputs, options=REFERENCE))
        return graphs[-1]

    first, second = MLP().eval(), MLP().eval()
    compiled_first, compiled_second = (torch.compile(m, backend=backend) for m in (first, second))
    x = torch.randn(5, 4)
    with torch.no_grad():
        compiled_first(x), compiled_second(x), compiled_first(x)
        (graph,) = graphs
        first_set, (second_set,) = graph.current, graph.shelved
        (variant,) = first_set.variants

        def switching_call(*inputs):  # what a thread serving `second` does meanwhile
            graph.current = second_set
            return variant.call(*inputs)

        graph.current = first_set._replace(variants=[variant._replace(call=switching_call)])
        torch.testing.assert_close(compiled_second(x), second(x), rtol=1e-4, atol=1e-4)


def test_two_instances_served_from_two_threads_give_their_own_results():
    first, second = MLP().eval(), MLP().eval()
    compiled = [torch.compile(m, backend="tensorrt", options=REFERENCE) for m in (first, second)]
    x = torch.randn(5, 4)
    with torch.no_grad():
        expected = [first(x), second(x)]
    failures = []

    def serve(k):
        with torch.no_grad():
            for _ in range(100):
                if not torch.allclose(compiled[k](x), expected[k], rtol=1e-4, atol=1e-4):
                    failures.append(k)

    threads = [threading.Thread(target=serve, args=(k,)) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_a_written_weight_drops_its_instances_engines_only(builds):
    first, second = MLP().eval(), MLP().eval()
    compiled_first, compiled_second = (torch.compile(m, backend="tensorrt", options=REFERENCE) for m in (first, second))
    x = torch.randn(5, 4)
    with torch.no_grad():
        compiled_first(x), compiled_second(x)
        first.fc1.weight.mul_(-1)
        for compiled, model in [(compiled_first, first), (compiled_second, second)] * 2:
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert len(builds) == 3


def test_a_graph_keeps_the_engines_of_max_weight_sets(traces, monkeypatch):
    from torch_trt.backend import dynamo

    monkeypatch.setattr(dynamo, "MAX_WEIGHT_SETS", 2)
    models = [MLP().eval() for _ in range(3)]
    compiled = [torch.compile(m, backend="tensorrt", options=REFERENCE) for m in models]
    x = torch.randn(5, 4)
    with torch.no_grad():
        for k in (0, 1, 2, 2, 1, 0):
            torch.testing.assert_close(compiled[k](x), models[k](x), rtol=1e-4, atol=1e-4)
    assert len(traces) == 4  # the first model's engine was evicted from its graph by the third's


def _compiled_graphs(model, options):
    """torch.compile(model) on the reference target, and the list of the CompiledGraphs its backend returns."""
    from torch_trt.backend.dynamo import tensorrt_backend

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(tensorrt_backend(gm, example_inputs, options={**REFERENCE, **options}))
        return graphs[-1]

    return torch.compile(model, backend=backend, dynamic=True), graphs


@pytest.mark.parametrize("options,direct", [({}, True), ({"torch_executed_ops": {"aten::relu"}}, False)],
                         ids=["fully converted", "partly in pytorch"])
def test_only_a_graph_that_is_one_engine_call_skips_the_torchscript_interpreter(options, direct):
    model = MLP().eval()
    compiled, graphs = _compiled_graphs(model, {"min_block_size": 1, **options})
    with torch.no_grad():
        for x, in batches(4, 6):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    (variant,) = graphs[-1].current.variants
    assert (variant.call is not variant.module) == direct


def test_a_dynamic_engine_that_fails_to_build_gives_one_engine_per_shape(builds, monkeypatch, caplog):
    from torch_trt.backend import dynamo
    from torch_trt.errors import EngineBuildError

    spy = dynamo.compile_frozen

    def static_only(module, specs, settings, device):
        if any(spec.is_dynamic for spec in specs):
            raise EngineBuildError("no dynamic engine here")
        return spy(module, specs, settings, device)

    monkeypatch.setattr(dynamo, "compile_frozen", static_only)
    model = MLP().eval()
    compiled, graphs = _compiled_graphs(model, {})
    with caplog.at_level(logging.WARNING, logger="torch_trt"), torch.no_grad():
        for x, in batches(4, 9, 4):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert [specs[0].max_shape for specs, _ in builds] == [(4, 4), (9, 4)]
    assert graphs[-1].builds is dynamo.Builds.PER_SHAPE and len(graphs[-1].current.variants) == 2
    assert "could not build a dynamic-shape engine" in caplog.text and "no dynamic engine here" in caplog.text


def test_past_max_shapes_new_shapes_run_in_pytorch_and_built_ones_keep_their_engines(builds, monkeypatch, caplog):
    from torch_trt.backend import dynamo

    monkeypatch.setattr(dynamo, "MAX_SHAPES", 2)
    model = ScaleBySqrtOfBatch()
    compiled, graphs = _compiled_graphs(model, {})
    with caplog.at_level(logging.WARNING, logger="torch_trt"), torch.no_grad():
        for x, in batches(4, 9, 5, 6, 7, 5, 9):  # dynamo's first graph is static (batch 4), its second dynamic
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert [specs[0].max_shape for specs, _ in builds] == [(4, 4), (9, 4), (5, 4)]
    assert graphs[-1].builds is dynamo.Builds.STOPPED and len(graphs[-1].current.variants) == 2
    assert caplog.text.count("could not rebuild a graph for new inputs") == 1
    assert "the graph already has engines for 2 input shapes" in caplog.text


def test_a_graph_with_an_input_dtype_engines_do_not_take_runs_in_pytorch(builds, caplog):
    """An int16 input raised a BackendCompilerFailed (Input's ValueError) instead of falling back."""
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch.compile(lambda x: x * 2 + 1, backend="tensorrt", options=REFERENCE)
        x = torch.arange(6, dtype=torch.int16)
        torch.testing.assert_close(compiled(x), x * 2 + 1)
    assert builds == [] and "inputs of dtype torch.int16" in caplog.text


def test_a_graph_with_an_empty_input_runs_in_pytorch(builds, caplog):
    """An empty key cache (batch, heads, 0, dim) on a decoder's first step raised BackendCompilerFailed (Input's
    ValueError) instead of falling back."""
    with caplog.at_level(logging.WARNING, logger="torch_trt"):
        compiled = torch.compile(lambda past, new: torch.cat([past, new], 2) * 2, backend="tensorrt", options=REFERENCE)
        past, new = torch.zeros(1, 2, 0, 4), torch.randn(1, 2, 1, 4)
        torch.testing.assert_close(compiled(past, new), torch.cat([past, new], 2) * 2)
    assert builds == [] and "an input of shape (1, 2, 0, 4): engines take no empty dims" in caplog.text


@pytest.mark.parametrize("grad", [True, False], ids=["grad_mode", "no_grad"])
def test_weights_that_require_grad_in_grad_mode_get_a_warning(caplog, grad):
    """Eager's result requires grad there and the engine's does not; nothing said so."""
    model = nn.Linear(3, 2)
    with caplog.at_level(logging.WARNING, logger="torch_trt"), torch.set_grad_enabled(grad):
        result = torch.compile(model, backend="tensorrt", options=REFERENCE)(torch.randn(4, 3))
    assert not result.requires_grad
    assert ("backward() will not reach the weights" in caplog.text) == grad


def _rows_of_first(x, y):
    return x[torch.arange(y.shape[0])] * 2 + y


def test_dims_of_one_size_change_together_in_the_size_checks(builds):
    """Made dynamic one after the other (automatic dynamic), x's and y's batches are two symbols to dynamo, but the
    graph indexes x by y's: traced with y's resized alone, it failed, and every later shape got an engine of its own
    (5 builds for 5 shapes)."""
    compiled = torch.compile(_rows_of_first, backend="tensorrt", options=REFERENCE)
    for shape in ((2, 8), (2, 12), (3, 16), (4, 16), (5, 9)):
        x, y = torch.randn(shape), torch.randn(shape)
        torch.testing.assert_close(compiled(x, y), _rows_of_first(x, y))
    assert len(builds) == 3
    assert [(spec.min_shape, spec.max_shape) for spec in builds[-1][0]] == [((1, 1), (64, 64))] * 2


def _rows_of_first_past_three(x, y):
    rows = x[torch.arange(y.shape[0])] * 2 + y
    if y.shape[0] >= 3:  # a guard on y's batch alone: dynamo bounds it below by 3, x's by 1
        rows = rows + 1
    return rows


def test_dims_of_one_size_share_one_range(builds):
    """The engine's min shapes took x's batch at 1 and y's at 3, which shape analysis could not run (x indexed by
    y's rows), and every later shape got an engine of its own (6 builds for 5 shapes)."""
    compiled = torch.compile(_rows_of_first_past_three, backend="tensorrt", options=REFERENCE)
    for shape in ((3, 8), (3, 12), (4, 16), (5, 16), (6, 9)):
        x, y = torch.randn(shape), torch.randn(shape)
        torch.testing.assert_close(compiled(x, y), _rows_of_first_past_three(x, y))
    assert len(builds) == 3
    assert [spec.min_shape[0] for spec in builds[-1][0]] == [3, 3]


def _scores_over_cache_and_new_key(cache, key, mask):
    """A decoding step's shapes: a KV cache of n keys, one new key, and an attention mask over all n + 1."""
    keys = torch.cat([cache, key], 1)
    if mask.size(1) > keys.size(1) or mask.size(1) < keys.size(1):  # guards both ways, and no single equality
        raise ValueError("the mask must cover the cache and the new key")
    return (keys * key).sum(-1) * mask.index_select(1, torch.arange(keys.size(1)))


def _scores_over_mask_tail(cache, key, mask):
    keys = torch.cat([cache, key], 1).sum(-1)
    return keys * mask[:, -keys.size(1):]  # dynamo writes the mask's length as the cache's plus 1


def _scores_over_mask_head(cache, key, mask):
    keys = torch.cat([cache, key], 1)
    if mask.size(1) < keys.size(1):  # a guard one way: the mask may be longer
        raise ValueError("the mask must cover the cache and the new key")
    return (keys * key).sum(-1) * mask.index_select(1, torch.arange(keys.size(1)))


@pytest.mark.parametrize("function", [_scores_over_cache_and_new_key, _scores_over_mask_tail, _scores_over_mask_head],
                         ids=["guarded_apart", "written_as_cache_plus_one", "guarded_at_least_one_longer"])
def test_a_mask_one_longer_than_the_cache_gets_one_dynamic_engine(builds, function):
    """Token by token, the mask is one longer than the KV cache. Ranged alone, the mask's max was the cache's (64 and
    64), where the graph cannot run, or no size of one alone passed dynamo's guards: either way every token built an
    engine of its own (generate() with a left-padded batch compiled once a token). Guarded one way only, the ranges
    were narrowed by half until the graph ran at their max, and a later length built again."""
    compiled = torch.compile(function, backend="tensorrt", options=REFERENCE)
    for length in (5, 6, 7, 9, 12, 20, 40):
        cache, key, mask = torch.randn(2, length, 4), torch.randn(2, 1, 4), torch.randn(2, length + 1)
        torch.testing.assert_close(compiled(cache, key, mask), function(cache, key, mask))
    assert len(builds) == 2  # the first length, static, then every later one
    cache_spec, _, mask_spec = builds[-1][0]
    assert mask_spec.max_shape[1] == cache_spec.max_shape[1] + 1
    assert mask_spec.min_shape[1] == cache_spec.min_shape[1] + 1


class FortyPositions(nn.Module):
    def __init__(self):
        super().__init__()
        self.positions = nn.Embedding(40, 4)

    def forward(self, x):
        return x + self.positions(torch.arange(x.size(1)))


def test_a_graph_that_cannot_run_at_the_max_shape_gets_a_narrower_range(builds):
    """Dynamo does not know that 40 positions bound the length: the range's max (64) failed shape analysis, and every
    later length got an engine of its own."""
    check_compiled(FortyPositions().eval(), [[torch.randn(2, length, 4)] for length in (5, 6, 9, 20, 30)])
    assert len(builds) == 2  # the first length, static, then every later one
    (spec,), _ = builds[-1]
    assert spec.min_shape[1] <= 6 and 30 <= spec.max_shape[1] <= 40


def test_a_size_value_undefined_at_a_tried_size_is_no_error():
    """PVT's (s // 4) ** 2 // (8 * (s // 4)) divides by 0 at s = 3, one of the sizes tried: the compile died with
    ZeroDivisionError (BackendCompilerFailed) instead of trying the next size."""
    from torch.utils._sympy.functions import FloorDiv

    from torch_trt.backend.dynamic_shapes import _value

    s = sympy.Symbol("s0", positive=True, integer=True)
    expr = FloorDiv(FloorDiv(s, 4) ** 2, 8 * FloorDiv(s, 4))
    assert _value(expr, {s: 3}) is None and _value(expr, {s: 64}) == 2
