"""A scripted module's results held against eager's on the examples, before anything is compiled from it.

torch.jit.script compiles some Python to other results than eager's: a bool fill value is an int to TorchScript,
so `torch.full((2,), True)` is an int64 tensor where eager's is bool, and a library's `torch.jit.is_scripting()`
branch may compute otherwise. Such a module is refused, naming each result whose kind, dtype, shape or values
differ, rather than compiled to what TorchScript computes. Values are compared only where two eager runs agree (a
forward may draw random numbers).
"""

import torch

from ..errors import LoweringError
from . import module_state

_ULPS = 16  # the same kernels run in both: room for a reordered sum, none for another computation


def check_scripted_like_eager(module, scripted, examples):
    """Raise a LoweringError where `scripted` returns results of another kind, dtype, shape or value than `module`
    does on `examples` (each run on copies of them, as a forward may write its inputs)."""
    try:
        with torch.no_grad(), module_state.left_as_it_was(module):
            eager, again = module(*example_copies(examples)), module(*example_copies(examples))
            with torch.jit.optimized_execution(False):  # TorchScript's GPU fuser rounds half sums otherwise
                script = scripted(*example_copies(examples))
    except Exception:  # not ours to report here: compiling the scripted module says what fails
        return
    differences = list(_differences(eager, again, script, "result"))
    if differences:
        lines = "\n".join(f"  - {difference}" for difference in differences)
        raise LoweringError(
            f"torch.jit.script compiles {type(module).__name__} to results unlike eager's on the example inputs:\n"
            f"{lines}\nTorchScript reads some Python otherwise (a bool fill value or Scalar is an int to it: pass "
            "dtype= explicitly). Change the module so that its scripted form matches, or compile it with "
            "torch.compile(backend=\"tensorrt\").")


def example_copies(examples):
    return [example.clone() if isinstance(example, torch.Tensor) else example for example in examples]


def _differences(eager, again, script, path):
    """Where `script` differs from `eager` (and `again`, eager's second run, does not), as lines naming the path."""
    if isinstance(eager, torch.Tensor) and isinstance(script, torch.Tensor):
        if eager.dtype != script.dtype or eager.shape != script.shape:
            yield (f"{path} is {script.dtype} of shape {tuple(script.shape)} scripted, {eager.dtype} of shape "
                   f"{tuple(eager.shape)} in eager")
        elif _close(eager, again) and not _close(eager, script):
            difference = (eager.double() - script.double()).abs().nan_to_num(nan=float("inf")).max()
            yield f"{path} differs from eager's by up to {float(difference):.3g}"
    elif isinstance(eager, (tuple, list)) and isinstance(script, (tuple, list)):  # TorchScript's split gives a list
        if len(eager) != len(script):
            yield f"{path} holds {len(script)} items scripted, {len(eager)} in eager"
        for index, items in enumerate(zip(eager, again, script)):
            yield from _differences(*items, f"{path}[{index}]")
    elif isinstance(eager, dict) and isinstance(script, dict):
        if eager.keys() != script.keys():
            yield f"{path} has keys {sorted(map(str, script))} scripted, {sorted(map(str, eager))} in eager"
        for key in eager.keys() & script.keys():
            yield from _differences(eager[key], again[key], script[key], f"{path}[{key!r}]")
    elif type(eager) is not type(script):
        yield f"{path} is a {type(script).__name__} scripted, a {type(eager).__name__} in eager"
    elif eager == again and eager != script:
        yield f"{path} is {script!r} scripted, {eager!r} in eager"


def _close(a, b):
    """Whether two tensors of one dtype and shape hold the same values (NaN where the other has NaN)."""
    if not a.is_floating_point():
        return torch.equal(a, b)
    tolerance = _ULPS * torch.finfo(a.dtype).eps
    return torch.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True)
