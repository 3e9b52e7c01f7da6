"""Converter coverage per model: how many nodes land in engines, how many engines, and what falls back and why.

The HuggingFace models of tests/models/zoo.py (small configs, random weights) and, when torchvision can
be imported, resnet50, mobilenet_v3_large, efficientnet_b0, convnext_tiny, vit_b_16, swin_t, shufflenet_v2_x1_0
and maxvit_t:

    python benchmarks/coverage.py
    python benchmarks/coverage.py --models bert gpt2 --dynamo

Each model goes through `torch_trt.explain(model, inputs, target="reference", allow_traced_control_flow=True)`: the partition compile
would act on, without stitching. The markdown table has per model the nodes in engines of all nodes,
the engines, and the ops that fell back, counted per op and reason code; the last line totals them.
`--dynamo` also runs each model once through torch.compile(backend="tensorrt") and adds the graphs
dynamo made, the engine calls of each (0: that graph runs in PyTorch), and the largest error of the
compiled outputs against eager, absolute and relative to the largest eager value. `--device cuda`
runs everything on the GPU.
"""

import argparse
import logging
import pathlib
import sys
import traceback
from collections import Counter

import torch

import torch_trt
from torch_trt.backend.dynamo import CompiledGraph, tensorrt_backend

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "models"))
import zoo  # noqa: E402  (the HF model builders the tests use)

TORCHVISION = ("resnet50", "mobilenet_v3_large", "efficientnet_b0", "convnext_tiny", "vit_b_16", "swin_t",
               "shufflenet_v2_x1_0", "maxvit_t")
# transformers' shape checks are Python `if`s on traced sizes; the examples have the shapes of every call
EXPLAIN_OPTIONS = {"target": "reference", "allow_traced_control_flow": True}
DYNAMO_OPTIONS = {"target": "reference"}
COLUMNS = ("model", "nodes in engines", "converted", "engines", "fallbacks (op: reason x count)")


def available_models():
    """{name: () -> (model in eval mode, inputs)}: the HF zoo, then torchvision's when it can be imported."""
    models = {name: (lambda name=name: zoo.build(name)) for name in zoo.ZOO}
    try:
        import torchvision
    except ImportError as error:
        print(f"note: torchvision models skipped ({error})", file=sys.stderr)
        return models
    for name in TORCHVISION:
        models[name] = lambda name=name: _torchvision_model(torchvision, name)
    return models


def _torchvision_model(torchvision, name):
    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None).eval()
    for parameter in model.parameters():  # ViT's head starts at zero: its output would not depend on any layer
        if not parameter.any():
            torch.nn.init.normal_(parameter, std=0.02)
    return model, [torch.randn(1, 3, 224, 224)]


def coverage(name, model, inputs, dynamo=False):
    """One row: the explain report's counts for `model`, and with `dynamo` its engine calls per dynamo graph and
    the error of that compiled model against eager."""
    report = torch_trt.explain(model, inputs, **EXPLAIN_OPTIONS)
    row = {"model": name, "engine_nodes": sum(s.node_count for s in report.segments if s.kind == "engine"),
           "nodes": sum(s.node_count for s in report.segments), "engines": report.engine_count,
           "fallbacks": Counter((description.split(" ")[0], reason.code.value)
                                for description, reason in report.fallbacks)}
    if dynamo:
        row["engine_calls"], row["max_error"] = dynamo_engine_calls(model, inputs)
    return row


def dynamo_engine_calls(model, inputs):
    """The execute_engine calls of each graph torch.compile(backend="tensorrt") makes of `model`, in order, and
    (max abs error, that error relative to the largest eager value) of its outputs against eager's."""
    per_graph = []

    def backend(gm, example_inputs):
        compiled = tensorrt_backend(gm, example_inputs, options=DYNAMO_OPTIONS)
        variants = compiled.current.variants if isinstance(compiled, CompiledGraph) else []  # else it runs in PyTorch
        modules = [variant.module for variant in variants]
        per_graph.append(sum(str(m.graph).count("torch_trt::execute_engine") for m in modules))
        return compiled

    torch._dynamo.reset()
    with torch.no_grad():
        actual, expected = torch.compile(model, backend=backend)(*inputs), model(*inputs)
    pairs = list(zip(_tensors(actual), _tensors(expected)))
    error = max(((a.float() - e.float()).abs().max().item() for a, e in pairs), default=0.0)
    scale = max((e.float().abs().max().item() for _, e in pairs), default=0.0)
    return per_graph, (error, error / scale if scale else error)


def _tensors(value):
    """The floating-point tensors in a (nested) model output."""
    if isinstance(value, torch.Tensor):
        return [value] if value.is_floating_point() else []
    if isinstance(value, dict):
        value = list(value.values())
    return [t for item in value for t in _tensors(item)] if isinstance(value, (list, tuple)) else []


def header(dynamo):
    columns = COLUMNS + (("engine calls per dynamo graph", "max error vs eager (relative)") if dynamo else ())
    return f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}"


def markdown_row(row, dynamo):
    """A row of the table; `row` has an `error` instead of counts when explain failed."""
    if "error" in row:
        cells = [row["model"], "-", "-", "-", f"error: {row['error']}"] + (["-", "-"] if dynamo else [])
    else:
        fallbacks = ", ".join(f"{op}: {code} x{count}" for (op, code), count in row["fallbacks"].most_common())
        cells = [row["model"], f"{row['engine_nodes']}/{row['nodes']}", _percent(row["engine_nodes"], row["nodes"]),
                 str(row["engines"]), fallbacks or "-"]
        if dynamo:
            absolute, relative = row["max_error"]
            cells += [", ".join(map(str, row["engine_calls"])) or "no graph", f"{absolute:.1e} ({relative:.1e})"]
    return "| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |"


def total_row(rows, dynamo):
    """The totals over the models that explain could report on, and how many of them are fully converted."""
    counted = [row for row in rows if "error" not in row]
    engine_nodes, nodes = sum(r["engine_nodes"] for r in counted), sum(r["nodes"] for r in counted)
    full = sum(r["engine_nodes"] == r["nodes"] for r in counted)
    fallbacks = sum((r["fallbacks"] for r in counted), Counter())
    cells = [f"total ({full} of {len(rows)} models fully converted)", f"{engine_nodes}/{nodes}",
             _percent(engine_nodes, nodes), str(sum(r["engines"] for r in counted)),
             f"{sum(fallbacks.values())} node(s) in PyTorch"]
    if dynamo:
        calls = [c for r in counted for c in r["engine_calls"]]
        cells.append(f"{len(calls)} graph(s), {sum(calls)} engine call(s)")
    return "| " + " | ".join(cells) + " |"


def _last_line(error):
    """The message's last line: TorchScript puts the error that happened after its own traceback."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _percent(part, whole):
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main(argv=None):
    models = available_models()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=sorted(models), default=list(models),
                        help="the models to report on (default: all available)")
    parser.add_argument("--dynamo", action="store_true", help="also count engine calls through torch.compile")
    parser.add_argument("--device", default="cpu", help="where the models and engines run (cpu or cuda)")
    args = parser.parse_args(argv)
    print(header(args.dynamo), flush=True)
    rows = []
    for name in args.models:
        model, inputs = models[name]()
        try:
            model, inputs = model.to(args.device), [t.to(args.device) for t in inputs]
            row = coverage(name, model, inputs, args.dynamo)
        except Exception as error:  # one model's failure is a row of the report, not the end of it
            traceback.print_exc()
            row = {"model": name, "error": f"{type(error).__name__}: {_last_line(error)}"}
        rows.append(row)
        print(markdown_row(row, args.dynamo), flush=True)
    print(total_row(rows, args.dynamo))
    return rows


if __name__ == "__main__":
    logging.getLogger("torch_trt").setLevel(logging.ERROR)  # the table says what the fallback warnings would
    main()
