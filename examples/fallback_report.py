"""A model with an op TensorRT cannot take: engines around it, PyTorch for it, and the report that says why."""

import torch

import torch_trt


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.i0(torch.relu(self.fc1(x)))  # the Bessel function i0 has no converter: it runs in PyTorch
        return torch.sigmoid(self.fc2(h)) * 2


def main():
    model = Model().eval()
    inputs = [torch_trt.Input(min_shape=(1, 16), opt_shape=(8, 16), max_shape=(32, 16))]
    print(torch_trt.explain(model, inputs, min_block_size=3, target="reference"))
    compiled = torch_trt.compile(model, inputs=inputs, min_block_size=3, target="reference")
    x = torch.randn(5, 16)
    with torch.no_grad():
        print(f"\nmax abs error vs eager at batch 5: {(compiled(x) - model(x)).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
