"""Quickstart: compile a residual CNN and a transformer encoder block, compare with eager, time both.

Runs on CUDA when present, else CPU; uses real TensorRT when installed, else the reference target.
"""

import time

import torch
from torch import nn

import torch_trt


class ResidualCNN(nn.Module):
    def __init__(self, channels=32, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
                                  nn.MaxPool2d(2))
        self.block = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
                                   nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels))
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class EncoderBlock(nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        batch, tokens, dim = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attention = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / (dim // self.heads) ** 0.5, dim=-1)
        context = torch.matmul(attention, v).permute(0, 2, 1, 3).reshape(batch, tokens, dim)
        x = x + self.proj(context)
        return x + self.mlp(self.norm2(x))


def latency_ms(function, inputs, device, iterations=50):
    """Median latency over `iterations` calls after warm-up."""
    with torch.no_grad():
        for _ in range(5):
            function(*inputs)
        times = []
        for _ in range(iterations):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            function(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def engine_ops(report):
    """`12 nodes in 1 engine(s): aten::add, aten::relu, ...`, from the partition report torch_trt.explain returns."""
    ops = [op for segment in report.segments if segment.kind == "engine" for op in segment.ops]
    return f"{len(ops)} nodes in {report.engine_count} engine(s): {', '.join(sorted(set(ops)))}"


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"device: {device}")
    for model, shape in ((ResidualCNN(), (8, 3, 32, 32)), (EncoderBlock(), (8, 16, 64))):
        model = model.eval().to(device)
        x = torch.randn(shape, device=device)
        inputs = [torch_trt.Input(shape)]
        report = torch_trt.explain(model, inputs, require_full_compilation=True)  # what compile converts, and how
        compiled = torch_trt.compile(model, inputs=inputs, require_full_compilation=True)
        with torch.no_grad():
            error = (compiled(x) - model(x)).abs().max().item()
        print(f"\n{type(model).__name__}: {engine_ops(report)}")
        print(f"  max abs error vs eager: {error:.2e}")
        print(f"  latency: eager {latency_ms(model, [x], device):.3f} ms, "
              f"torch_trt {latency_ms(compiled, [x], device):.3f} ms")


if __name__ == "__main__":
    main()
