"""torch_trt's warnings reach stderr in a fresh interpreter; set_log_level(logging.INFO) adds progress."""

import logging
import sys
import textwrap
from conformance.recorded_run import run_recorded

SCRIPT = textwrap.dedent("""
    import logging, sys, torch, torch_trt

    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.relu(torch.sigmoid(torch.relu(x) * 2)) + 1

    # sigmoid sent to PyTorch: a fallback warning
    options = {"target": "reference", "min_block_size": 1, "torch_executed_ops": {"aten::sigmoid"}}
    torch_trt.compile(Model(), inputs=[torch.randn(2, 3)], **options)
    print("=== INFO ===", file=sys.stderr, flush=True)
    torch_trt.set_log_level(logging.INFO)
    torch_trt.compile(Model(), inputs=[torch.randn(2, 3)], **options)
""")


def _stderr_of(script):
    result = run_recorded(script, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stderr


def test_warnings_reach_stderr_and_info_shows_once_asked_for():
    default, info = _stderr_of(SCRIPT).split("=== INFO ===")
    assert "torch_trt WARNING:" in default and "run in PyTorch" in default
    assert "torch_trt INFO:" not in default
    assert "torch_trt INFO:" in info and "torch_trt WARNING:" in info


def test_records_still_propagate_to_the_users_logging(caplog):
    with caplog.at_level(logging.WARNING):
        logging.getLogger("torch_trt.backend").warning("a torch_trt warning")
    assert "a torch_trt warning" in caplog.text
    assert logging.getLogger("torch_trt").propagate

