"""RNN, LSTM and GRU ops check their initial states before they run (lowering/passes/recurrent_states.py): LibTorch's
kernels read out of bounds for a state of another batch, which nn.LSTM's forward refuses in Python."""

import subprocess
import sys
import textwrap

import pytest

# In a process of its own: without the check, the compile's shape analysis (its runs at the Inputs' corners pair an
# input and a state of other batches) corrupted the heap and killed the process.
SCRIPT = textwrap.dedent("""
    import torch, torch_trt
    from torch import nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.{cls}(8, 6, batch_first=True)

        def forward(self, x, h0, c0):
            return self.rnn(x, {states})

    torch.manual_seed(0)
    module = Recurrent().eval()
    specs = [torch_trt.Input(min_shape=(1, 2, 8), opt_shape=(3, 5, 8), max_shape=(4, 8, 8))] + \\
        [torch_trt.Input(min_shape=(1, 1, 6), opt_shape=(1, 3, 6), max_shape=(1, 4, 6))] * 2
    compiled = torch_trt.compile(module, inputs=specs, target="reference")
    for batch in (1, 2, 4):
        args = torch.randn(batch, 3, 8), torch.randn(1, batch, 6), torch.randn(1, batch, 6)
        torch.testing.assert_close(compiled(*args), module(*args))
    try:
        compiled(torch.randn(2, 3, 8), torch.randn(1, 1, 6), torch.randn(1, 1, 6))
    except Exception as error:
        assert "Expected hidden[0] size (1, 2, 6), got [1, 1, 6]" in str(error), error
    else:
        raise AssertionError("a state of another batch was accepted")
    print("ok")
""")


@pytest.mark.parametrize("cls,states", [("LSTM", "(h0, c0)"), ("GRU", "h0 + c0")])
def test_a_state_of_another_batch_is_an_error_not_a_corrupted_heap(cls, states):
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(cls=cls, states=states)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]
