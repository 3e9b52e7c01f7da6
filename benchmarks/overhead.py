"""Per-call overhead of torch_trt's runtime on tiny engines, against eager PyTorch (issue 11, item 5).

    python benchmarks/overhead.py                         # on CUDA when present, else on the CPU
    python benchmarks/overhead.py --device cpu --calls 1000

Each row is the median host time of one call, in µs, over --calls calls after --warmup calls, under
torch.no_grad(); on a GPU the device is synchronized before each call, outside the timed span, so a row
is what the call costs the host (checks, shapes, addresses, launches), not kernel time.

    relu: eager                torch.relu on a (1, 8) tensor
    relu: ScriptModule         the same op through torch_trt.compile(..., target="reference")
    relu: execute_engine       torch.ops.torch_trt.execute_engine on that engine, called directly
    relu: dynamo               torch.compile(backend="tensorrt") on the same op
    linears: eager             a stack of LAYERS Linear(8, 8) layers: 2 * LAYERS parameters
    linears: ScriptModule      the stack through torch_trt.compile
    linears: dynamo            the stack through torch.compile(backend="tensorrt")

"dynamo - ScriptModule" is the dynamo wrapper's own cost per call (guards, the baked weights' version
checks), printed for both modules: with 200 parameters it shows what grows with the parameter count.
"""

import argparse
import statistics

import torch

import measure
import torch_trt

SHAPE = (1, 8)
LAYERS = 100
OPTIONS = {"target": "reference", "min_block_size": 1}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=10_000, help="timed calls per row")
    parser.add_argument("--warmup", type=int, default=100, help="untimed calls before them")
    args = parser.parse_args()
    if args.calls < 1 or args.warmup < 0:
        parser.error(f"--calls must be >= 1 and --warmup >= 0, got {args.calls} and {args.warmup}")
    device = torch.device(args.device)
    print(f"{torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}, torch {torch.__version__}; "
          f"median host µs per call over {args.calls} calls; linears: {LAYERS} layers, {2 * LAYERS} parameters\n\n"
          "| call | µs |\n|---|---|", flush=True)
    medians = {}
    with torch.no_grad():
        x = torch.randn(SHAPE, device=device)
        for name, function in calls(x):
            medians[name] = median_us(function, x, args, device)
            print(f"| {name} | {medians[name]:.1f} |", flush=True)
    for module in ("relu", "linears"):
        wrapper = medians[f"{module}: dynamo"] - medians[f"{module}: ScriptModule"]
        print(f"| {module}: dynamo - ScriptModule | {wrapper:.1f} |")


def calls(x):
    """(name, callable) of each row, compiled for `x` and checked against eager before it is timed."""
    relu = torch.nn.ReLU().eval()
    script = torch_trt.compile(relu, inputs=[x], **OPTIONS)
    engine_arguments = _engine_arguments(script)
    linears = torch.nn.Sequential(*[torch.nn.Linear(SHAPE[1], SHAPE[1]) for _ in range(LAYERS)]).to(x.device).eval()
    rows = [
        ("relu: eager", relu),
        ("relu: ScriptModule", script),
        ("relu: execute_engine", lambda t: torch.ops.torch_trt.execute_engine([t], *engine_arguments)[0]),
        ("relu: dynamo", _dynamo(relu)),
        ("linears: eager", linears),
        ("linears: ScriptModule", torch_trt.compile(linears, inputs=[x], **OPTIONS)),
        ("linears: dynamo", _dynamo(linears)),
    ]
    for name, function in rows:
        expected = (relu if name.startswith("relu") else linears)(x)
        torch.testing.assert_close(function(x), expected, msg=lambda message: f"{name} differs from eager: {message}")
    return rows


def median_us(function, x, args, device):
    """Median host time of `function(x)` in µs over args.calls calls after args.warmup calls."""
    for _ in range(args.warmup):
        function(x)
    return statistics.median(measure.host_times_ms(function, (x,), args.calls, device)) * 1e3


def _engine_arguments(script):
    """The constant arguments (engine, id, target, device) of the ScriptModule's one execute_engine call."""
    nodes = [node for node in script.graph.nodes() if node.kind() == "torch_trt::execute_engine"]
    if len(nodes) != 1:
        raise RuntimeError(f"expected one torch_trt::execute_engine call in the compiled graph, found {len(nodes)}")
    return [value.toIValue() for value in list(nodes[0].inputs())[1:]]


def _dynamo(module):
    """torch.compile(module, backend="tensorrt"), raising rather than running a graph in PyTorch."""
    return torch.compile(module, backend="tensorrt", options={**OPTIONS, "pass_through_build_failures": True})


if __name__ == "__main__":
    main()
