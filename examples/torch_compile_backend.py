"""torch.compile(model, backend="tensorrt"): no import of torch_trt needed, dynamic batch sizes build once.

Prints the outputs' max abs error against eager for batch sizes 1, 7 and 32, and how many engines were built.
"""

import logging

import torch
from torch import nn


class _CountBuilds(logging.Handler):
    def __init__(self):
        super().__init__()
        self.builds = 0

    def emit(self, record):
        self.builds += record.getMessage().startswith("built engine")


def main():
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, 10)).eval()
    counter = _CountBuilds()
    build_logger = logging.getLogger("torch_trt.conversion.build")
    build_logger.addHandler(counter)
    build_logger.setLevel(logging.INFO)
    compiled = torch.compile(model, backend="tensorrt", dynamic=True, options={"min_block_size": 1})
    with torch.no_grad():
        for batch in (7, 32, 1):
            x = torch.randn(batch, 64)
            print(f"batch {batch:2d}: max abs error vs eager {(compiled(x) - model(x)).abs().max().item():.2e}")
    print(f"engines built: {counter.builds}")


if __name__ == "__main__":
    main()
