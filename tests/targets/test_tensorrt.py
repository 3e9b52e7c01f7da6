"""The real-TensorRT target (torch_trt/targets/tensorrt.py) without TensorRT: selection, version checks, and
its TensorRT-only helpers run against a stand-in module generated from the bindings manifest, with every
API use recorded and checked, plus a static check of every `trt.X.Y` name the module spells out."""

import ast
import inspect
import logging
import sys

import pytest
import torch

import torch_trt.targets
from conformance.fake_tensorrt import fake_tensorrt
from conformance.manifest import Manifest
from conformance.recorder import Recorder, report, violations
from torch_trt.targets.target_logger import error_recorder, target_logger
from torch_trt.errors import TorchTRTError
from torch_trt.targets import tensorrt as trt_target

MANIFEST = Manifest()


@pytest.fixture
def fake_module(monkeypatch):
    """Install a stand-in `tensorrt` (fixture(version)); the target caches are cleared before and after."""
    def install(version=MANIFEST.version):
        module = fake_tensorrt(MANIFEST, version)
        monkeypatch.setitem(sys.modules, "tensorrt", module)
        trt_target.load.cache_clear()
        torch_trt.targets.resolve_target.cache_clear()
        return module

    yield install
    trt_target.load.cache_clear()
    torch_trt.targets.resolve_target.cache_clear()


@pytest.mark.parametrize("version", ["10.3.0.26", "10.13.3.9", "11.4.0.106"])
def test_supported_versions_load(fake_module, version):
    module = fake_module(version)
    assert trt_target.load() is module


# 10.0-10.2 lack ISliceLayer.axes, which every slice sets (NvInfer.h 10.3: "axes" added to ISliceLayer).
@pytest.mark.parametrize("version", ["8.6.1", "9.3.0.1", "10.0.1.6", "10.2.0.19", "12.0.0", "nightly"])
def test_unsupported_version_is_a_clear_error(fake_module, version):
    fake_module(version)
    with pytest.raises(TorchTRTError, match=rf"TensorRT {version} is not supported; torch_trt needs TensorRT 10.3 "
                                            r"to 11.x .*pip install 'tensorrt>=10.3,<12'.*target='reference'"):
        trt_target.load()


@pytest.mark.parametrize("target", ["tensorrt", "auto"])
def test_unsupported_version_fails_at_target_selection(fake_module, monkeypatch, target):
    fake_module("10.0.1.6")
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    with pytest.raises(TorchTRTError, match="TensorRT 10.0.1.6 is not supported"):
        torch_trt.targets.resolve_target(target, torch.device("cuda", 0))


def test_tensorrt_target_without_tensorrt_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # makes `import tensorrt` raise ImportError
    trt_target.load.cache_clear()
    torch_trt.targets.resolve_target.cache_clear()
    try:
        assert trt_target.load() is None
        with pytest.raises(TorchTRTError, match="pip install tensorrt --extra-index-url https://pypi.nvidia.com"):
            torch_trt.targets.resolve_target("tensorrt")
    finally:
        trt_target.load.cache_clear()
        torch_trt.targets.resolve_target.cache_clear()


def test_auto_with_a_cpu_device_uses_the_reference(fake_module, monkeypatch):
    """TensorRT >= 10 refuses host IO ("location must always be kDEVICE"): CPU engines are the reference's."""
    fake_module()
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    module = torch_trt.targets.resolve_target("auto", torch.device("cpu"))
    assert torch_trt.targets.target_name(module) == "reference"
    cuda = torch_trt.targets.resolve_target("auto", torch.device("cuda", 0))
    assert torch_trt.targets.target_name(cuda) == "tensorrt"


def test_tensorrt_target_with_a_cpu_device_is_a_clear_error(fake_module, monkeypatch):
    fake_module()
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    with pytest.raises(TorchTRTError, match=r"target='tensorrt' runs engines on CUDA devices only, but the device "
                                            r"is cpu; pass device='cuda'.*or target='reference'"):
        torch_trt.targets.resolve_target("tensorrt", torch.device("cpu"))


@pytest.mark.parametrize("cuda, expected", [(True, "tensorrt"), (False, "reference")])
def test_auto_uses_tensorrt_only_with_cuda(fake_module, monkeypatch, caplog, cuda, expected):
    fake_module()
    monkeypatch.setattr("torch.cuda.is_available", lambda: cuda)
    with caplog.at_level(logging.WARNING, logger="torch_trt.targets"):
        module = torch_trt.targets.resolve_target("auto")
    assert torch_trt.targets.target_name(module) == expected
    assert ("using the PyTorch reference target" in caplog.text) == (expected == "reference")


def test_manifest_ships_with_the_package():
    manifest = trt_target.api_manifest()
    assert manifest["version"] == trt_target.MANIFEST_VERSION
    assert "add_activation" in manifest["classes"]["INetworkDefinition"]["methods"]


def _recorded(fake):
    recorder = Recorder()
    return recorder, recorder.module(fake)


@pytest.mark.parametrize("level, python_logger", [(logging.INFO, True), (logging.DEBUG, True),
                                                  (logging.WARNING, False)])
def test_messages_go_through_python_only_when_torch_trt_logs_at_info(level, python_logger, caplog):
    """A Python ILogger takes every message TensorRT emits (each one the GIL, VERBOSE included): it is the target's
    logger only when torch_trt logs at INFO or below; otherwise TensorRT's own Logger filters at WARNING."""
    recorder, trt = _recorded(fake_tensorrt(MANIFEST))
    with caplog.at_level(level, logger="torch_trt"):
        trt_logger = target_logger(trt)
    assert isinstance(trt_logger, trt.ILogger) and isinstance(trt_logger, trt.Logger) != python_logger
    assert target_logger(trt) is trt_logger  # TensorRT keeps the first logger of the process anyway
    if python_logger:
        with caplog.at_level(logging.DEBUG, logger="torch_trt.targets.target_logger"):
            for severity in ("WARNING", "INFO", "VERBOSE"):
                trt_logger.log(getattr(trt.ILogger, severity), f"{severity} message")
        assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name.endswith("target_logger")] == [
            (logging.WARNING, "tensorrt: WARNING message"), (logging.DEBUG, "tensorrt: INFO message"),
            (logging.DEBUG, "tensorrt: VERBOSE message")]
    assert not violations(recorder, MANIFEST), report(violations(recorder, MANIFEST), MANIFEST)


def test_each_builder_and_runtime_keeps_its_own_errors():
    """Errors go to the IErrorRecorder of the object that failed (networks and engines inherit their creator's),
    so two builds never read each other's errors through the one process-wide logger."""
    recorder, trt = _recorded(fake_tensorrt(MANIFEST))
    first, second = error_recorder(trt), error_recorder(trt)
    first.report_error(trt.ErrorCodeTRT.INVALID_ARGUMENT, "axes repeat an axis")
    assert (first.errors, second.errors) == (["axes repeat an axis"], [])
    assert (first.num_errors(), first.get_error_desc(0), first.get_error_code(0)) == (
        1, "axes repeat an axis", trt.ErrorCodeTRT.INVALID_ARGUMENT)
    first.clear()
    assert first.num_errors() == 0 and not first.has_overflowed() and isinstance(first, trt.IErrorRecorder)
    assert not violations(recorder, MANIFEST), report(violations(recorder, MANIFEST), MANIFEST)


def test_builder_helpers_use_only_real_api(tmp_path, caplog):
    """Progress monitor, debug profiling, timing cache and the engine inspector, on the manifest's API."""
    recorder, trt = _recorded(fake_tensorrt(MANIFEST))
    builder = trt.Builder(target_logger(trt))
    config = builder.create_builder_config()
    path = tmp_path / "cache dir" / "timing.cache"
    with caplog.at_level(logging.INFO, logger="torch_trt.targets.tensorrt"):
        trt_target.configure_builder(trt, config, debug=True, timing_cache_path=str(path))
        monitor = config.progress_monitor
        monitor.phase_start("Building engine", "", 3)
        assert monitor.step_complete("Building engine", 1) is True
        monitor.phase_finish("Building engine")
    assert "TensorRT build phase Building engine: 3 steps" in caplog.text
    assert "TensorRT build phase Building engine finished" in caplog.text
    trt_target.save_timing_cache(config, str(path))
    assert path.exists()
    engine = trt.Runtime(target_logger(trt)).deserialize_cuda_engine(b"plan")
    trt_target.engine_report(trt, engine, engine.create_execution_context())
    calls = {(k[1], k[2]) for k in recorder.records if k[0] == "call"}
    assert {("IBuilderConfig", "create_timing_cache"), ("IBuilderConfig", "set_timing_cache"),
            ("IBuilderConfig", "get_timing_cache"), ("ITimingCache", "serialize"),
            ("ICudaEngine", "create_engine_inspector"), ("EngineInspector", "get_engine_information"),
            ("IProgressMonitor", "__init__")} <= calls
    assert ("enum", "ProfilingVerbosity", "DETAILED") in recorder.records
    assert not violations(recorder, MANIFEST), report(violations(recorder, MANIFEST), MANIFEST)


def test_every_trt_name_spelled_in_the_module_exists():
    """Static check: `trt.X`, `trt.X.Y` and the overridden callback methods of trt.ILogger/IProgressMonitor."""
    tree = ast.parse(inspect.getsource(trt_target))
    problems, checked = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "trt":
            checked.add(node.attr)
            problems.append(MANIFEST.check_module_name(node.attr))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "trt":
            owner = node.value.attr
            checked.add(f"{owner}.{node.attr}")
            if node.attr == "__init__":
                problems.append(None if MANIFEST.overloads(owner, "__init__") else f"{owner} has no constructor")
            else:
                problems.append(MANIFEST.check_enum_member(owner, node.attr) if MANIFEST.enum_name(owner)
                                else MANIFEST.check_attribute(owner, node.attr, "get"))
        if isinstance(node, ast.ClassDef):
            for base in (b for b in node.bases if isinstance(b, ast.Attribute) and b.value.id == "trt"):
                for method in (f for f in node.body if isinstance(f, ast.FunctionDef) and f.name != "__init__"):
                    real = MANIFEST.overloads(base.attr, method.name)
                    names = [a.arg for a in method.args.args[1:]]
                    checked.add(f"{base.attr}.{method.name}")
                    if real is None or names not in [[n for n, _ in r] for r in real]:
                        problems.append(f"{node.name}.{method.name}{tuple(names)} overrides no {base.attr} method")
    assert {"IProgressMonitor.step_complete", "IProgressMonitor.phase_start", "ProfilingVerbosity.DETAILED",
            "LayerInformationFormat.JSON"} <= checked
    assert not [p for p in problems if p], [p for p in problems if p]
