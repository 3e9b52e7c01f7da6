"""conversion/build.py on both targets: TF32 follows PyTorch, build errors name what the network logged, and on
the tensorrt target (a stand-in module generated from the bindings manifest) the timing cache is used and kept,
the progress monitor is installed only when INFO is shown, and IO is never placed on the host."""

import contextlib
import logging
import types

import pytest
import torch

import torch_trt
import torch_trt.targets.reference as reference
from conformance.fake_tensorrt import fake_tensorrt
from conformance.manifest import Manifest
from conformance.recorder import Recorder, recording, report, violations
from torch_trt._settings import CompileSettings
from torch_trt.conversion import build
from torch_trt.conversion.context import ConversionCtx
from torch_trt.targets.target_logger import target_logger
from torch_trt.errors import EngineBuildError

MANIFEST = Manifest()


@pytest.fixture
def allow_tf32():
    """Set PyTorch's TF32 switches for one test: fixture(matmul=..., cudnn=...)."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32

    def set_(matmul, cudnn):
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn

    yield set_
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def _compile(model, shape):
    return torch_trt.compile(model.eval(), inputs=[torch.randn(shape)], target="reference", min_block_size=1,
                             require_full_compilation=True)


def _compile_relu():
    return _compile(torch.nn.ReLU(), (2, 3))


def _builds_with_tf32(compile_model):
    """Whether the engine `compile_model()` builds keeps TensorRT's default TF32 flag (never set, only cleared)."""
    with recording() as recorder:
        compile_model()
    cleared = ("call", "IBuilderConfig", "clear_flag", 1, ()) in recorder.records
    assert cleared == (("enum", "BuilderFlag", "TF32") in recorder.records)
    return not cleared


@pytest.mark.parametrize("matmul", [False, True])
def test_tf32_follows_pytorchs_matrix_product_switch_where_no_convolution_dominates(allow_tf32, matmul):
    """TensorRT enables TF32 by default; with PyTorch's matmul TF32 off (its default), such engines do not use it."""
    allow_tf32(matmul=matmul, cudnn=not matmul)
    assert _builds_with_tf32(_compile_relu) == matmul
    # a convolution whose kernel is a small part of the weights: the products are mostly the linear layer's
    small_convolution = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.Flatten(), torch.nn.Linear(64, 64))
    assert _builds_with_tf32(lambda: _compile(small_convolution, (1, 3, 4, 4))) == matmul


@pytest.mark.parametrize("cudnn", [False, True])
def test_tf32_of_a_convolutional_network_follows_cudnns_switch_as_its_eager_convolutions(allow_tf32, cudnn, caplog):
    """Eager runs convolutions in TF32 by default (cuDNN's switch): so must an engine whose weights are mostly
    convolution kernels, or a float32 ResNet-50 runs at 0.44x eager's speed. The debug log says which it follows."""
    allow_tf32(matmul=not cudnn, cudnn=cudnn)
    network = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3),
                                  torch.nn.Flatten(), torch.nn.Linear(8, 2))
    with caplog.at_level(logging.DEBUG, logger="torch_trt"):
        assert _builds_with_tf32(lambda: _compile(network, (1, 3, 5, 5))) == cudnn
    decided = [r.getMessage() for r in caplog.records if "TF32" in r.getMessage()]
    assert decided == [f"float32 products {'in' if cudnn else 'not in'} TF32, as eager's convolutions "
                       "(torch.backends.cudnn.allow_tf32)"], decided


@pytest.mark.unrecorded  # the recorder hands the pipeline a copy of each IHostMemory
def test_the_compiled_module_holds_the_plan_the_builder_wrote_not_a_copy(monkeypatch):
    """A transformer's plan is hundreds of MB: the module's engine constant is the IHostMemory's own memory."""
    plans = []
    build_serialized_network = reference.Builder.build_serialized_network
    monkeypatch.setattr(reference.Builder, "build_serialized_network",
                        lambda self, *args: plans.append(build_serialized_network(self, *args)) or plans[-1])
    module = _compile_relu()
    constants = [node.t("value") for node in module.graph.findAllNodes("prim::Constant")
                 if node.hasAttribute("value") and node.kindOf("value") == "t"]
    assert [c.data_ptr() for c in constants] == [torch.frombuffer(plans[0], dtype=torch.uint8).data_ptr()]


def test_reference_config_has_tf32_on_by_default_as_tensorrt():
    config = reference.Builder(target_logger(reference)).create_builder_config()
    assert config.get_flag(reference.BuilderFlag.TF32)
    config.clear_flag(reference.BuilderFlag.TF32)
    assert not config.get_flag(reference.BuilderFlag.TF32)


def test_build_error_names_what_the_network_logged_before_the_build():
    """TensorRT reports a setter's misuse when it happens and later fails the build generically: report both."""
    builder = reference.Builder(target_logger(reference))
    ctx = ConversionCtx(reference, builder, CompileSettings(target="reference"))
    ctx.net.add_input("input_0", reference.float32, (2,))
    builder.error_recorder.report_error(reference.ErrorCodeTRT.INVALID_ARGUMENT,  # as a setter reports it
                                        "ISliceLayer::setAxes: axes repeat an axis")
    with pytest.raises(EngineBuildError, match="setAxes: axes repeat an axis.*no outputs"):
        build.build_engine(ctx, builder, [torch_trt.Input((2,))], torch.device("cpu"), tf32=True)


def _fake_ctx(trt):
    """What build_engine reads from a ConversionCtx, over a stand-in tensorrt module."""
    builder = trt.Builder(target_logger(trt))
    network = builder.create_network(0)
    ctx = types.SimpleNamespace(trt=trt, net=types.SimpleNamespace(definition=network),
                                settings=CompileSettings(target="tensorrt"),
                                network_errors=lambda: [])
    return ctx, builder


@pytest.fixture
def tensorrt_build(monkeypatch, tmp_path):
    """build_engine on the stand-in tensorrt module, on a pretend cuda:0; returns (recorder, cache dir)."""
    fake = fake_tensorrt(MANIFEST)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(build, "device_guard", lambda device: contextlib.nullcontext())
    recorder = Recorder()
    trt = recorder.module(fake)

    def run():
        ctx, builder = _fake_ctx(trt)
        build.build_engine(ctx, builder, [torch_trt.Input((2, 3))], torch.device("cuda", 0), tf32=True)
        return recorder

    return run, tmp_path


def test_tensorrt_build_uses_and_keeps_the_timing_cache(tensorrt_build):
    run, cache_dir = tensorrt_build
    recorder = run()
    calls = {(k[1], k[2]) for k in recorder.records if k[0] == "call"}
    assert {("IBuilderConfig", "create_timing_cache"), ("IBuilderConfig", "set_timing_cache"),
            ("IBuilderConfig", "get_timing_cache"), ("ITimingCache", "serialize")} <= calls
    saved = list((cache_dir / "torch_trt").iterdir())
    assert [p.name for p in saved] == [f"timing-trt{MANIFEST.version}-NVIDIA_H100_80GB_HBM3.cache"]
    assert not violations(recorder, MANIFEST), report(violations(recorder, MANIFEST), MANIFEST)


def test_tensorrt_build_never_places_io_on_the_host(tensorrt_build):
    """TensorRT >= 10 refuses host IO at build ("location must always be kDEVICE")."""
    run, _ = tensorrt_build
    recorder = run()
    assert not [k for k in recorder.records if k[:3] == ("set", "ITensor", "location")]
    assert ("enum", "TensorLocation", "HOST") not in recorder.records


@pytest.mark.parametrize("level, installed", [(logging.WARNING, False), (logging.INFO, True)])
def test_progress_monitor_only_when_info_is_shown(tensorrt_build, caplog, level, installed):
    """Every IProgressMonitor callback takes the GIL during the build: install it only when its logs are seen."""
    run, _ = tensorrt_build
    with caplog.at_level(level, logger="torch_trt"):
        recorder = run()
    assert (("set", "IBuilderConfig", "progress_monitor") in recorder.records) == installed


def test_tensorrt_target_refuses_a_cpu_build():
    trt = Recorder().module(fake_tensorrt(MANIFEST))
    ctx, builder = _fake_ctx(trt)
    with pytest.raises(torch_trt.errors.TorchTRTError, match="CUDA devices only, not on cpu"):
        build.build_engine(ctx, builder, [torch_trt.Input((2, 3))], torch.device("cpu"), tf32=True)
