import pytest
import torch

import torch_trt
from torch_trt.errors import ConversionError, UnsupportedOperatorError


class SizeArithmetic(torch.nn.Module):
    def forward(self, x):
        rows = x.size(0) * 2 // 2
        return x.reshape(rows, -1) + float(x.dim())


def test_size_and_int_arithmetic_are_evaluated():
    x = torch.randn(4, 3, 2)
    compiled = torch_trt.compile(SizeArithmetic(), inputs=[x], target="reference", min_block_size=1)
    torch.testing.assert_close(compiled(x), SizeArithmetic()(x))


class TakesTheOnlyChunk(torch.nn.Module):
    def forward(self, x, *rest):  # *rest: traced, and the trace unpacks split's one chunk with a one-output ListUnpack
        return x.split(1, dim=-1)[-1] - 1


def test_a_one_output_unpack_gives_its_tensor():
    """The unpack's one output was the list itself: "graph output ... is [<ITensor>], not a tensor"."""
    x = torch.randn(3, 2, 1)
    compiled = torch_trt.compile(TakesTheOnlyChunk(), inputs=[torch_trt.Input(min_shape=(1, 2, 1), opt_shape=(3, 2, 1),
                                                                             max_shape=(8, 2, 1))],
                                 target="reference", min_block_size=1, require_full_compilation=True, device="cpu")
    torch.testing.assert_close(compiled(x), TakesTheOnlyChunk()(x))


class Unconvertible(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.ops.torch_trt_test.opaque(x, 0))


def test_full_compilation_names_unsupported_node_and_schema():
    with pytest.raises(UnsupportedOperatorError, match=r"torch_trt_test::opaque \[torch_trt_test::opaque"):
        torch_trt.compile(Unconvertible(), inputs=[torch.randn(3)], target="reference", require_full_compilation=True)


class CeilModePool(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.max_pool2d(x, (1, 3), 2, ceil_mode=True) * 2


def test_converter_failure_names_the_node():
    with pytest.raises(ConversionError, match=r"while converting aten::max_pool2d .*both drops and adds windows"):
        torch_trt.compile(CeilModePool(), inputs=[torch.randn(1, 2, 6, 6)], target="reference",
                          require_full_compilation=True)
