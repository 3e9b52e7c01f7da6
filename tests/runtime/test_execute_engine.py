import io

import pytest
import torch

import torch_trt
from torch_trt.errors import EngineIOError
from conformance.recorded_run import run_recorded


class Model(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x * 2 + y), torch.sigmoid(x)


def _compile(device="cpu", **inputs):
    x, y = torch.randn(2, 3, device=device), torch.randn(2, 3, device=device)
    return torch_trt.compile(Model(), inputs=[x, y], target="reference", min_block_size=1), x, y


def test_engine_call_is_in_the_graph():
    compiled, x, y = _compile()
    assert "torch_trt::execute_engine" in str(compiled.graph)
    for got, want in zip(compiled(x, y), Model()(x, y)):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("change,message", [
    (lambda x: x.double(), "dtype torch.float64"),
    (lambda x: torch.randn(3, 3), r"shape \(3, 3\), outside the engine's profile"),
    (lambda x: torch.randn(2, 3, 1), r"shape \(2, 3, 1\)"),
])
def test_input_mismatch_errors(change, message):
    compiled, x, y = _compile()
    with pytest.raises(Exception, match=message):
        compiled(change(x), y)


@pytest.mark.parametrize("spec_dtype, settings", [(torch.int8, {}), (torch.int64, {"truncate_long_and_double": True})],
                         ids=["int8", "int64_truncated"])
def test_an_input_of_another_dtype_than_its_engine_casts_from_is_refused(spec_dtype, settings):
    """An input the engine holds in another dtype is cast on entering: the cast took any dtype (float 1.7 came in
    as int8 1, silently), where the engine itself checks dtypes."""
    compiled = torch_trt.compile(torch.jit.script(Doubled()), inputs=[torch_trt.Input((3,), dtype=spec_dtype)],
                                 target="reference", min_block_size=1, device="cpu", **settings)
    x = torch.tensor([1, -2, 3], dtype=spec_dtype)
    torch.testing.assert_close(compiled(x), x * 2)
    with pytest.raises(Exception, match=f"has dtype torch.float32, but the module was compiled for {spec_dtype}"):
        compiled(torch.tensor([1.7, -2.5, 100.0]))


class Doubled(torch.nn.Module):
    def forward(self, x):
        return x * 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA to put an input on another device")
def test_device_mismatch_error():
    compiled, x, y = _compile()
    with pytest.raises(Exception, match="is on cuda"):
        compiled(x.cuda(), y)


def test_device_mismatch_error_message_on_cpu():
    from torch_trt.runtime.engine_manager import EngineRunner

    compiled, x, y = _compile()
    runner = EngineRunner(memoryview(_engine_constant(compiled).numpy()), "reference", torch.device("cpu"))
    runner.device = torch.device("cuda")  # an engine on another device than its inputs
    with pytest.raises(EngineIOError, match="move it with .to"):
        runner.check_inputs([x, y])


def _engine_constant(compiled):
    return next(n.output().toIValue() for n in compiled.graph.nodes()
                if n.kind() == "prim::Constant" and n.output().type().kind() == "TensorType"
                and n.output().toIValue().dtype == torch.uint8)


def test_corrupted_engine_bytes_give_a_clear_error():
    from torch_trt.runtime.engine_manager import EngineRunner

    compiled, _, _ = _compile()
    engine = _engine_constant(compiled).clone()
    engine[100:200] = 7
    with pytest.raises(EngineIOError, match="corrupted"):
        EngineRunner(memoryview(engine.numpy()), "reference", torch.device("cpu"))
    with pytest.raises(EngineIOError, match="cannot deserialize"):
        EngineRunner(memoryview(bytes(3)), "reference", torch.device("cpu"))


def test_a_loaded_module_with_corrupted_engine_bytes_is_refused_while_the_original_runs():
    """The original's runner serves the same engine id: the loaded module's own bytes are checked all the same."""
    compiled, x, y = _compile()
    compiled(x, y)
    buffer = io.BytesIO()
    torch.jit.save(compiled, buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    _engine_constant(loaded)[100:200] = 7
    with pytest.raises(Exception, match="corrupted"):
        loaded(x, y)


class MasksByABoolScalar(torch.nn.Module):
    def forward(self, mask):
        return mask * torch.tensor(True)  # a 0-d bool constant once frozen, left in PyTorch (PROD takes no BOOL)


def test_a_bool_scalar_constant_survives_saving():
    """TorchScript loads a 0-d bool tensor constant back as a Python bool: the first call failed an INTERNAL ASSERT
    ("We don't have an op for aten::mul ... Tensor, bool"), in the module compile returns and in one saved again."""
    mask = torch.tensor([True, False])
    compiled = torch_trt.compile(MasksByABoolScalar(), [mask], target="reference", min_block_size=1)
    buffer = io.BytesIO()
    torch.jit.save(compiled, buffer)
    buffer.seek(0)
    for module in (compiled, torch.jit.load(buffer)):
        assert torch.equal(module(mask), mask)


def test_save_and_load_in_a_fresh_process(tmp_path):
    compiled, x, y = _compile()
    path = tmp_path / "model.ts"
    torch.jit.save(compiled, str(path))
    torch.save({"x": x, "y": y, "out": compiled(x, y)}, tmp_path / "io.pt")
    script = f"""
import torch, torch_trt
m = torch.jit.load({str(path)!r})
io = torch.load({str(tmp_path / 'io.pt')!r})
for got, want in zip(m(io["x"], io["y"]), io["out"]):
    torch.testing.assert_close(got, want)
print("ok")
"""
    result = run_recorded(script, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def test_input_that_requires_grad_is_an_error_not_a_result_without_gradients():
    compiled, x, y = _compile()
    with pytest.raises(Exception, match="cannot compute gradients.*torch.no_grad"):
        compiled(x.requires_grad_(), y)


@pytest.mark.parametrize("no_grad_mode", [torch.no_grad, torch.inference_mode])
def test_input_that_requires_grad_runs_without_grad_mode(no_grad_mode):
    compiled, x, y = _compile()
    x.requires_grad_()
    expected = Model()(x.detach(), y)
    with no_grad_mode():
        for got, want in zip(compiled(x, y), expected):
            torch.testing.assert_close(got, want)


class MeansTheRowsInPyTorch(torch.nn.Module):
    """nansum has no converter: x reaches no engine, and its size was folded for the compiled shape."""

    def forward(self, x):
        return torch.sigmoid(torch.nansum(x, 0) / x.size(0)) * 2 + 1


@pytest.mark.parametrize("other", [torch.randn(5, 3), torch.randn(2, 3, dtype=torch.float16)], ids=["shape", "dtype"])
def test_an_input_no_engine_receives_is_checked_against_its_input(other, tmp_path):
    module = torch.jit.script(MeansTheRowsInPyTorch())
    compiled = torch_trt.compile(module, [torch_trt.Input((2, 3))], target="reference", min_block_size=1,
                                 device="cpu")
    x = torch.randn(2, 3)
    torch.testing.assert_close(compiled(x), module(x))
    torch.jit.save(compiled, tmp_path / "means.ts")
    for loaded in (compiled, torch.jit.load(tmp_path / "means.ts")):
        with pytest.raises(RuntimeError, match=r"input %x\S* is a .* the module was compiled for torch.float32"):
            loaded(other)


class ScaledInPyTorch(torch.nn.Module):
    """x reaches no engine (sin and mul run in PyTorch): one engine computes a product of constants."""

    def __init__(self):
        super().__init__()
        self.linear, self.scale = torch.nn.Linear(3, 3), torch.nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        return torch.sin(x) * self.scale + self.linear(torch.ones(2, 3))


def test_an_input_no_engine_receives_that_requires_grad_is_an_error_not_a_result_missing_the_weights_gradients():
    """The compiled module's weights are constants: backward() would reach x but never scale or the linear's."""
    module = ScaledInPyTorch()
    compiled = torch_trt.compile(module, [torch.randn(2, 3)], target="reference", min_block_size=1, device="cpu",
                                 torch_executed_ops={"aten::sin", "aten::mul", "aten::add"})
    assert compiled.graph.findAllNodes("torch_trt::check_input")
    x = torch.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot compute gradients.*torch.no_grad"):
        compiled(x)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), module(x))


def test_inputs_engines_receive_are_checked_there_only():
    """No check of its own for an input an engine takes: the engine checks it on every call."""
    compiled, _, _ = _compile()
    assert not compiled.graph.findAllNodes("torch_trt::check_input")
