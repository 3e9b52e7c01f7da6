import pytest
import torch

import torch_trt
from harness import check_converter, dynamic_inputs, make_input, scripted
from converted_ops import record_converted

f32, f16, i32, i64, b8 = torch.float32, torch.float16, torch.int32, torch.int64, torch.bool


def causal_mask(x):
    """The mask HF builds: positions compared with an arange, from sizes known at build."""
    positions = torch.arange(x.size(-1), device=x.device)
    return positions[None, :] <= positions[:, None]


def padding_mask(x):
    """A key-padding mask from an arange compared with the lengths in x."""
    return torch.arange(x.size(1), device=x.device).unsqueeze(0) < x[:, :1]


# torch.tensor is recorded only by scripting (a trace makes its result a constant), so the cases call scripted
# helpers, which a trace inlines as transformers' DeBERTa calls its scaled_size_sqrt.
@torch.jit.script
def _size_as_float(x: torch.Tensor):
    return torch.tensor(x.size(-1), dtype=torch.float)


@torch.jit.script
def _scalar_tensors(x: torch.Tensor):  # constant data would fold in lowering: these are computed from sizes
    return (torch.tensor(x.size(0) * 2), torch.tensor(x.size(1) / 4, dtype=torch.float16), torch.tensor(x.size(0) > 1),
            torch.tensor([x.size(1) / 2, -2.0, 0.25], device=x.device))


@torch.jit.script
def _sizes(x: torch.Tensor):
    return torch.tensor([x.size(0), x.size(1), 1], device=x.device)


@torch.jit.script
def _sizes_fp16(x: torch.Tensor):
    return torch.tensor([x.size(1), 2, x.size(0)], dtype=torch.float16, device=x.device)


CASES = [  # id, function, converters, inputs (shapes of `dtype`, or tensors used as they are), dtype
    ("zeros", lambda x: x + torch.zeros(x.shape[0], 3, device=x.device), {"aten::zeros"}, [(2, 3)], f32),
    ("zeros_int_dtype", lambda x: x * torch.zeros(x.size(), dtype=torch.int32, device=x.device), {"aten::zeros"},
     [(2, 3)], i32),
    ("ones_fp16", lambda x: x + torch.ones(x.size(), dtype=torch.float16, device=x.device), {"aten::ones"},
     [(2, 1, 3)], f16),
    ("ones_bool", lambda x: x & torch.ones(x.size(-1), dtype=torch.bool, device=x.device), {"aten::ones"}, [(2, 4)],
     b8),
    ("full", lambda x: x * torch.full([x.size(0), 3], 2.5, device=x.device), {"aten::full"}, [(2, 3)], f32),
    ("full_int_value_is_int64", lambda x: torch.full([x.size(0)], 7, device=x.device) + x[0], {"aten::full"},
     [(3,)], i32),
    ("full_dtype_fp16", lambda x: x + torch.full([x.size(-1)], -1.0, dtype=torch.float16, device=x.device),
     {"aten::full"}, [(2, 3)], f16),
    ("zeros_like", lambda x: torch.zeros_like(x) + x, {"aten::zeros_like"}, [(2, 3)], f32),
    ("zeros_like_int", lambda x: torch.zeros_like(x) - x, {"aten::zeros_like"}, [(4,)], i32),
    ("ones_like_dtype", lambda x: torch.ones_like(x, dtype=torch.float16) * 3, {"aten::ones_like"}, [(2, 3)], f32),
    ("ones_like_bool", lambda x: torch.ones_like(x) ^ x, {"aten::ones_like"}, [(2, 3)], b8),
    ("full_like", lambda x: torch.full_like(x, 0.5) * x, {"aten::full_like"}, [(1, 2, 3)], f16),
    ("full_like_int", lambda x: torch.full_like(x, -4) + x, {"aten::full_like"}, [(5,)], i32),
    ("new_zeros", lambda x: x.new_zeros([2, x.size(1)]) + x, {"aten::new_zeros"}, [(2, 3)], f32),
    ("new_ones_int", lambda x: x.new_ones(x.size(0), 1) + x, {"aten::new_ones"}, [(3, 2)], i32),
    ("new_full", lambda x: x.new_full([x.size(1)], 1.5) * x, {"aten::new_full"}, [(2, 3)], f16),
    ("new_full_dtype", lambda x: x.new_full([x.size(1)], 2, dtype=torch.int32) + x, {"aten::new_full"}, [(2, 3)], f32),
    ("arange", lambda x: x + torch.arange(x.size(1), device=x.device), {"aten::arange"}, [(2, 3)], i32),
    ("arange_from_size", lambda x: x * torch.arange(x.size(-1), device=x.device), {"aten::arange"}, [(2, 5)], f32),
    ("arange_start_step_float", lambda x: x + torch.arange(0.5, x.size(0), 0.5, device=x.device),
     {"aten::arange"}, [(2, 3)], f16),
    ("arange_start", lambda x: x[:, :3] - torch.arange(2, x.size(1), dtype=torch.int32, device=x.device),
     {"aten::arange"}, [(2, 5)], i32),
    ("arange_step_negative", lambda x: x + torch.arange(x.size(0), 0, -2, device=x.device), {"aten::arange"},
     [(4, 2)], i32),
    ("causal_mask", causal_mask, {"aten::arange", "aten::le"}, [(3, 4)], f32),
    ("padding_mask", padding_mask, {"aten::arange", "aten::lt"},
     [torch.tensor([[2, 0, 0, 0], [4, 1, 1, 1]], dtype=i32)], i32),
    ("tensor_of_size_float", lambda x: x / torch.sqrt(_size_as_float(x)), {"aten::tensor"}, [(2, 8)], f32),
    ("tensor_of_size_int", lambda x: x + _scalar_tensors(x)[0], {"aten::tensor"}, [(2, 3)], i32),
    ("tensor_float_dtype_fp16", lambda x: x * _scalar_tensors(x)[1], {"aten::tensor"}, [(2, 3)], f16),
    ("tensor_of_size_comparison_bool", lambda x: x & _scalar_tensors(x)[2], {"aten::tensor"}, [(2, 3)], b8),
    ("tensor_float_list", lambda x: x - _scalar_tensors(x)[3], {"aten::tensor"}, [(2, 3)], f32),
    ("tensor_of_sizes_list", lambda x: x * _sizes(x), {"aten::tensor"}, [(2, 3)], i32),
    ("tensor_of_sizes_list_fp16", lambda x: x + _sizes_fp16(x), {"aten::tensor"}, [(3, 3)], f16),
    ("to_dtype", lambda x: x.to(torch.float16), {"aten::to"}, [(2, 3)], f32),
    ("to_dtype_int", lambda x: x.to(torch.int32), {"aten::to"}, [(2, 3)], f16),
    ("to_dtype_bool", lambda x: x.to(torch.bool), {"aten::to"}, [(2, 3)], i32),
    ("to_dtype_same", lambda x: x.to(torch.float32) * 2, {"aten::to"}, [(2, 3)], f32),
    ("float", lambda x: x.float(), {"aten::to"}, [(2, 3)], i32),
    ("to_dtype_of_other", lambda x, y: x.to(y.dtype), {"aten::to"}, [(2, 3), torch.ones(1, dtype=torch.int32)], f16),
    # The device of an intermediate tensor stays a prim::device node (a graph input's is folded by lowering).
    ("ones_on_device_of_intermediate", lambda x: x + torch.ones(x.size(-1), device=x.relu().device), {"aten::ones"},
     [(2, 3)], f32),
    ("type_as", lambda x, y: x.type_as(y) + y, {"aten::to"}, [(2, 3), torch.ones(3)], i32),  # lowered to aten::to
    ("type_as_bool", lambda x, y: x.type_as(y), {"aten::to"}, [(2, 3), torch.ones(3, dtype=torch.bool)], f32),
    ("tril", torch.tril, {"aten::tril"}, [(4, 4)], f32),
    ("tril_diagonal_batched", lambda x: torch.tril(x, -1), {"aten::tril"}, [(2, 3, 5)], f16),
    ("tril_int_wide", lambda x: x.tril(2), {"aten::tril"}, [(3, 6)], i32),
    ("triu", torch.triu, {"aten::triu"}, [(4, 4)], f32),
    ("triu_diagonal", lambda x: x.triu(1), {"aten::triu"}, [(2, 2, 3, 3)], i32),
    ("triu_bool_tall", lambda x: x.triu(-1), {"aten::triu"}, [(5, 3)], b8),
]


@pytest.mark.parametrize("name,function,converters,shapes,dtype", CASES, ids=[c[0] for c in CASES])
def test_creation(name, function, converters, shapes, dtype, device):
    check_converter(function, [make_input(s, dtype) for s in shapes], converters, device)


# aten::to with a device: converted when the device is the engine's (a prim::device, or a traced constant equal to
# the device compile is given), so these cases compile with device= the test's device.
TO_DEVICE = [  # id, function, input shape, dtype
    ("to_dtype_keyword", lambda x: x.to(dtype=torch.float16, device=x.device), (2, 3), f32),
    ("to_device_dtype", lambda x: x.to(x.device, torch.int32), (2, 3), f32),
    ("to_device_only", lambda x: x.to(x.device) + 1, (2, 3), f16),
    ("to_other", lambda x: x.to(x.half()), (2, 3), f32),
    # The device of an intermediate tensor stays a prim::device node when scripted (a graph input's is folded).
    ("to_device_of_intermediate", lambda x: x.to(x.relu().device, torch.float16), (2, 3), f32),
]


class _Traceable(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, x):
        return self.function(x)


@pytest.mark.parametrize("name,function,shape,dtype", TO_DEVICE, ids=[c[0] for c in TO_DEVICE])
def test_to_device(name, function, shape, dtype, device):
    x = make_input(shape, dtype).to(device)
    expected = function(x)
    for how, module in (("scripted", scripted(function, 1)), ("traced", torch.jit.trace(_Traceable(function), (x,)))):
        with record_converted() as converted:
            compiled = torch_trt.compile(module.to(device), inputs=[x], target="reference", device=device,
                                         require_full_compilation=True, min_block_size=1)
        assert "aten::to" in converted, f"{how}: aten::to did not run; converted: {sorted(set(converted))}"
        actual = compiled(x)
        assert actual.dtype == expected.dtype and actual.device == expected.device, how
        torch.testing.assert_close(actual, expected, msg=lambda text: f"{how}: {text}")


def test_to_another_device_runs_in_pytorch():
    """A move to a device other than the engine's (here the meta device) stays in PyTorch."""
    x = torch.randn(2, 3)
    compiled = torch_trt.compile(torch.jit.trace(_Traceable(lambda t: (t * 2).to("meta")), (x,)), inputs=[x],
                                 target="reference", device="cpu", min_block_size=1)
    result = compiled(x)
    assert result.device.type == "meta" and result.shape == (2, 3)


DYNAMIC = [  # id, function, converters, (min, opt, max, run) shape per input, dtype
    ("to_dtype_dynamic", lambda x: x.to(torch.float16), {"aten::to"}, [((1, 3), (4, 3), (8, 3), (6, 3))], f32),
    ("tril_dynamic_batch", lambda x: x.tril(), {"aten::tril"}, [((1, 3, 3), (2, 3, 3), (5, 3, 3), (4, 3, 3))], f32),
    ("arange_static_dim_of_dynamic", lambda x: x + torch.arange(x.size(1), device=x.device), {"aten::arange"},
     [((1, 4), (2, 4), (6, 4), (5, 4))], i32),
    # Sizes of dynamic dims are known at run time: an arange is a LINSPACE fill, a filled tensor a broadcast slice.
    ("arange_dynamic_size", lambda x: x + torch.arange(x.size(1), device=x.device), {"aten::arange"},
     [((1, 1), (2, 4), (6, 9), (5, 7))], i32),
    ("arange_dynamic_end_float", lambda x: x[:, 1:] * torch.arange(1, x.size(1), dtype=torch.float32,
                                                                     device=x.device), {"aten::arange"},
     [((1, 2), (2, 4), (6, 9), (5, 7))], f32),
    ("arange_dynamic_step", lambda x: x[:, ::2] - torch.arange(0, x.size(1), 2, device=x.device), {"aten::arange"},
     [((1, 1), (2, 4), (6, 9), (5, 7))], i32),
    ("arange_dynamic_negative_step", lambda x: torch.arange(x.size(0), 0, -1, device=x.device) * 2, {"aten::arange"},
     [((1,), (3,), (9,), (6,))], f32),
    ("zeros_dynamic", lambda x: x + torch.zeros(x.size(0), x.size(1), device=x.device), {"aten::zeros"},
     [((1, 1), (2, 4), (6, 9), (5, 7))], f32),
    ("ones_dynamic_bool", lambda x: x & torch.ones(x.size(0), 3, dtype=torch.bool, device=x.device), {"aten::ones"},
     [((1, 3), (2, 3), (6, 3), (5, 3))], b8),
    ("full_dynamic_int", lambda x: x + torch.full([x.size(0), x.size(1)], 7, dtype=torch.int32, device=x.device),
     {"aten::full"}, [((1, 1), (2, 4), (6, 9), (5, 7))], i32),
    ("new_ones_dynamic", lambda x: x.new_ones(x.size(0), 1) + x, {"aten::new_ones"}, [((1, 3), (2, 3), (6, 3),
                                                                                        (5, 3))], f16),
    ("zeros_like_dynamic", lambda x: torch.zeros_like(x) - x, {"aten::zeros_like"}, [((1, 1), (2, 4), (6, 9),
                                                                                        (5, 7))], i32),
    ("full_like_dynamic", lambda x: torch.full_like(x, 0.5) * x, {"aten::full_like"}, [((1, 1), (2, 4), (6, 9),
                                                                                        (5, 7))], f32),
    ("tril_dynamic_dims", lambda x: x.tril(), {"aten::tril"}, [((1, 1), (3, 4), (9, 9), (5, 7))], f32),
    ("triu_dynamic_dims_diagonal", lambda x: x.triu(1), {"aten::triu"}, [((1, 1, 1), (2, 3, 4), (4, 9, 9),
                                                                         (3, 7, 5))], i32),
    # A torch.tensor of sizes of dynamic dims is their shape tensor, cast to its dtype.
    ("tensor_of_dynamic_size_float", lambda x: x / torch.sqrt(_size_as_float(x)), {"aten::tensor"},
     [((1, 1), (2, 4), (6, 9), (5, 7))], f32),
    ("tensor_of_dynamic_sizes_list", lambda x: x * _sizes(x), {"aten::tensor"}, [((1, 1, 3), (2, 4, 3), (6, 9, 3),
                                                                                   (5, 7, 3))], i32),
    ("causal_mask_dynamic", causal_mask, {"aten::arange", "aten::le"}, [((1, 1), (2, 4), (6, 9), (5, 7))], f32),
    # A diagonal read from sizes (a causal mask offset by the cached keys: keys - queries).
    ("tril_diagonal_of_sizes", lambda x: x.tril(x.size(1) - x.size(0)), {"aten::tril"},
     [((1, 1), (2, 4), (6, 9), (3, 7))], f32),
    ("triu_diagonal_of_sizes", lambda x: x.triu(x.size(0) - 3), {"aten::triu"}, [((1, 1), (2, 4), (6, 9), (5, 7))],
     i32),
]


@pytest.mark.parametrize("name,function,converters,ranges,dtype", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_creation_dynamic(name, function, converters, ranges, dtype, device):
    specs, inputs = dynamic_inputs(ranges, dtype)
    check_converter(function, inputs, converters, device, specs=specs)


def test_a_cast_to_the_engine_device_converts_when_another_device_exists(monkeypatch):
    """On a CUDA machine, a CPU compile's `x.to("cpu")` is the engine's own device: a cast, not a device move."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the device "auto" would otherwise resolve to
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)

    class ToCpu(torch.nn.Module):
        def forward(self, x):
            return x.to("cpu", torch.float16) * 2

    x = torch.randn(2, 3)
    compiled = torch_trt.compile(ToCpu(), [x], target="reference", min_block_size=1, require_full_compilation=True)
    torch.testing.assert_close(compiled(x), ToCpu()(x))


class RangeBetweenSizes(torch.nn.Module):
    def forward(self, x, y):
        return torch.arange(x.size(0), y.size(0) + 1) * 2


def test_an_arange_whose_bounds_pass_each_other_at_run_time_fails_as_eager_does(device):
    """Eager raises where end < start with a positive step; the engine returned an empty tensor."""
    spec = torch_trt.Input(min_shape=(1,), opt_shape=(4,), max_shape=(8,))
    compiled = torch_trt.compile(RangeBetweenSizes().eval(), inputs=[spec, spec], device=device, target="reference",
                                 require_full_compilation=True, min_block_size=1)
    torch.testing.assert_close(compiled(torch.randn(2, device=device), torch.randn(5, device=device)),
                               torch.arange(2, 6, device=device) * 2)
    with pytest.raises(RuntimeError, match="assertion failed: arange: the bounds are inconsistent with the step"):
        compiled(torch.randn(5, device=device), torch.randn(2, device=device))
