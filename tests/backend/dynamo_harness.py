"""Helpers for the dynamo front-door tests: compile on the reference target and compare with eager."""

import torch

REFERENCE = {"target": "reference", "min_block_size": 1}


def check_compiled(model, calls, options=None, rtol=1e-4, atol=1e-4, device="cpu", **compile_args):
    """torch.compile(model, backend="tensorrt") on the reference target; each call's outputs match eager."""
    model = model.to(device)
    compiled = torch.compile(model, backend="tensorrt", options={**REFERENCE, **(options or {})}, **compile_args)
    for inputs in calls:
        inputs = [value.to(device) if isinstance(value, torch.Tensor) else value for value in inputs]
        with torch.no_grad():
            expected, actual = model(*inputs), compiled(*inputs)
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol)
    return compiled


def engine_calls(runs):
    """How many execute_engine calls the compiled modules of `runs` make."""
    return sum(str(module.graph).count("torch_trt::execute_engine") for _, module in runs)


GLUE = {"prim::Constant", "prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct", "prim::TupleUnpack"}


def engines_per_build(runs):
    """The number of execute_engine calls in each compiled module of `runs`, in build order."""
    return [str(module.graph).count("torch_trt::execute_engine") for _, module in runs]


def pytorch_ops(runs):
    """The ops the compiled modules of `runs` run in PyTorch (outside engines), sorted, with repeats."""
    return sorted(node.kind() for _, module in runs for node in module.graph.nodes()
                  if node.kind() not in GLUE and node.kind() != "torch_trt::execute_engine")
