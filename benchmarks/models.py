"""Eager vs torch.compile (inductor) vs torch_trt on real models: accuracy, latency ratios, compile time.

    python benchmarks/models.py [--models resnet50 bert] [--batch 1 32] [--dtype float32]

Needs CUDA for meaningful figures; ResNet-50 needs torchvision, BERT-base needs transformers
(random weights, no download). Prints one line per (model, batch): max abs and relative error of
torch_trt against eager, median latencies and their ratios, and compile times.
"""

import argparse
import time

import torch


def resnet50():
    import torchvision

    return torchvision.models.resnet50(weights=None), lambda batch: (torch.randn(batch, 3, 224, 224),)


def bert():
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(attn_implementation="eager"))
    return _FirstOutput(model), lambda batch: (torch.randint(0, 30000, (batch, 128)),)


class _FirstOutput(torch.nn.Module):
    """The last hidden state alone, so every backend returns one tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).last_hidden_state


MODELS = {"resnet50": resnet50, "bert": bert}


def median_ms(function, inputs, iterations):
    with torch.no_grad():
        for _ in range(3):
            function(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            function(*inputs)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def timed_compile(model, inputs, **kwargs):
    """torch.compile(model) and its first call (where compilation happens); returns (callable, seconds)."""
    torch._dynamo.reset()
    compiled = torch.compile(model, **kwargs)
    start = time.perf_counter()
    with torch.no_grad():
        compiled(*inputs)
    torch.cuda.synchronize()
    return compiled, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--batch", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--inductor", action="store_true", help="also time torch.compile's default backend")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, dtype {args.dtype}")
    for name in args.models:
        model, make_inputs = MODELS[name]()
        model = model.eval().cuda().to(dtype)
        for batch in args.batch:
            inputs = tuple(t.cuda().to(dtype) if t.is_floating_point() else t.cuda() for t in make_inputs(batch))
            with torch.no_grad():
                expected = model(*inputs)
            trt, trt_seconds = timed_compile(model, inputs, backend="tensorrt", options={"min_block_size": 3})
            with torch.no_grad():
                actual = trt(*inputs)
            error = (actual.float() - expected.float()).abs().max().item()
            relative = error / expected.float().abs().max().item()
            eager_ms = median_ms(model, inputs, args.iterations)
            trt_ms = median_ms(trt, inputs, args.iterations)
            line = (f"{name:9s} batch {batch:3d}: max abs err {error:.2e} (rel {relative:.1e}); eager {eager_ms:8.2f} ms, "
                    f"torch_trt {trt_ms:8.2f} ms ({eager_ms / trt_ms:.2f}x eager), compile {trt_seconds:.1f}s")
            if args.inductor:
                inductor, inductor_seconds = timed_compile(model, inputs)
                inductor_ms = median_ms(inductor, inputs, args.iterations)
                line += f"; inductor {inductor_ms:.2f} ms ({eager_ms / inductor_ms:.2f}x eager, {inductor_seconds:.0f}s)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
