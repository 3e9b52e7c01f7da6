"""In-place ops made functional keep the written tensor's dtype and shape, as eager's in-place ops do, through both
doors."""

import pytest
import torch

import torch_trt
from harness import FunctionModule

i32, i64, f16, f32, bf16 = torch.int32, torch.int64, torch.float16, torch.float32, torch.bfloat16


def _add(z, y):
    z += y
    return z


def _mul(z, y):
    z.mul_(y)
    return z * 1


def _addcmul(z, y):
    z.addcmul_(y, y, value=3)
    return z


def _add_twice(z, y):
    z.add_(y)
    z.add_(y)  # its `self` is the first write's result once both are functional
    return z


def _add_then_mul(z, y):
    z.add_(y * 1000)
    z.mul_(y)
    return z


def _clamp_to_a_float_bound(z, y):
    z.clamp_(min=y)
    return z


CASES = [  # id, in-place function of an intermediate z of x's dtype, x, y
    ("int32_plus_int64_wraps", _add, torch.tensor([2 ** 31 - 1, 5], dtype=i32), torch.tensor([1, 2 ** 40])),
    ("int8_times_int32_wraps", _mul, torch.tensor([100, -3], dtype=torch.int8), torch.tensor([3, 50], dtype=i32)),
    ("float16_plus_float32_rounds", _add, torch.tensor([1.0, 2.0], dtype=f16), torch.tensor([1e-4, 3e-4])),
    ("bfloat16_plus_float16", _add, torch.tensor([1.0, 3.0], dtype=bf16), torch.tensor([1e-3, 7e-3], dtype=f16)),
    ("float16_addcmul_float32", _addcmul, torch.tensor([1.0, 2.0], dtype=f16), torch.tensor([0.01, 0.02])),
    ("int32_plus_int64_twice_wraps", _add_twice, torch.full((2, 3), 2 ** 31 - 5, dtype=i32),
     torch.full((2, 3), 4)),
    ("float16_writes_overflow_to_inf", _add_then_mul, torch.tensor([60000.0, 1.0], dtype=f16),
     torch.tensor([2.0, 1e-4])),
    ("float16_clamp_float32", _clamp_to_a_float_bound, torch.tensor([1.0, 2.0], dtype=f16),
     torch.tensor([1.0001, 0.5])),
]


def _program(in_place):
    return lambda x, y: in_place((x * 2 - x).abs() + 1 - 1, y)


@pytest.mark.parametrize("name,in_place,x,y", CASES, ids=[c[0] for c in CASES])
def test_torchscript_door(name, in_place, x, y, device):
    module = FunctionModule(_program(in_place)).eval()
    x, y = x.to(device), y.to(device)
    specs = [torch_trt.Input(tuple(t.shape), dtype=t.dtype) for t in (x, y)]
    compiled = torch_trt.compile(module, specs, target="reference", min_block_size=1, device=device)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, y), module(x, y), rtol=0, atol=0)


@pytest.mark.parametrize("name,in_place,x,y", CASES, ids=[c[0] for c in CASES])
def test_dynamo_door(name, in_place, x, y, device, fresh_dynamo):
    module = FunctionModule(_program(in_place)).eval()
    x, y = x.to(device), y.to(device)
    compiled = torch.compile(module, backend="tensorrt", options={"target": "reference", "min_block_size": 1})
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, y), module(x, y), rtol=0, atol=0)


@pytest.mark.parametrize("in_place", [_mul, _add, _clamp_to_a_float_bound], ids=["mul_", "add_", "clamp_"])
@pytest.mark.parametrize("min_block_size", [1, 10], ids=["in_an_engine", "in_pytorch"])
def test_an_in_place_op_that_would_broadcast_its_tensor_bigger_raises_as_eager_does(in_place, min_block_size, device):
    """Eager raises "output with shape [1, 3] doesn't match the broadcast shape [5, 3]"; the functional op returned
    the [5, 3] broadcast, in an engine or in PyTorch."""
    module = FunctionModule(_program(in_place)).eval()
    spec = torch_trt.Input(min_shape=(1, 3), opt_shape=(4, 3), max_shape=(8, 3))
    compiled = torch_trt.compile(module, [spec, spec], target="reference", min_block_size=min_block_size,
                                 device=device)
    x, y = torch.randn(4, 3, device=device), torch.randn(4, 3, device=device)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, y), module(x, y))
        torch.testing.assert_close(compiled(x, y[:1]), module(x, y[:1]))
        with pytest.raises(RuntimeError, match="must match"):
            compiled(x[:1], y)
