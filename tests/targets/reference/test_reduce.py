import pytest
import torch

import torch_trt.targets.reference as trt

Op = trt.ReduceOperation
F32, I32 = trt.float32, trt.int32


def _mask(dims):
    return sum(1 << d for d in dims)


# (input, op, reduced dims, keep_dims, reference)
CASES = {
    "sum_one": (torch.randn(2, 3, 4), Op.SUM, (1,), False, lambda x: x.sum(1)),
    "sum_two_keep": (torch.randn(2, 3, 4), Op.SUM, (0, 2), True, lambda x: x.sum((0, 2), keepdim=True)),
    "prod": (torch.rand(2, 3, 4) + 0.5, Op.PROD, (2,), False, lambda x: x.prod(2)),
    "prod_two_keep": (torch.rand(2, 3, 4) + 0.5, Op.PROD, (0, 2), True,
                      lambda x: x.prod(2, keepdim=True).prod(0, keepdim=True)),
    "max_all": (torch.randn(2, 3, 4), Op.MAX, (0, 1, 2), False, lambda x: x.amax()),
    "min_keep": (torch.randn(2, 3, 4), Op.MIN, (1,), True, lambda x: x.amin(1, keepdim=True)),
    "avg_two": (torch.randn(2, 3, 4, 5), Op.AVG, (1, 3), False, lambda x: x.mean((1, 3))),
    "avg_rank1": (torch.randn(7), Op.AVG, (0,), True, lambda x: x.mean(0, keepdim=True)),
    "int32_sum": (torch.randint(-5, 5, (3, 4), dtype=torch.int32), Op.SUM, (1,), False,
                  lambda x: x.sum(1).to(torch.int32)),
    "int32_prod": (torch.randint(1, 4, (3, 4), dtype=torch.int32), Op.PROD, (0,), False,
                   lambda x: x.prod(0).to(torch.int32)),
    "int64_max": (torch.randint(-9, 9, (3, 4), dtype=torch.int64), Op.MAX, (0, 1), True,
                  lambda x: x.amax((0, 1), keepdim=True)),
}


@pytest.mark.parametrize("x, op, dims, keep, reference", CASES.values(), ids=CASES.keys())
def test_matches_pytorch(run_network, x, op, dims, keep, reference):
    out = run_network(lambda net, a: net.add_reduce(a, op, _mask(dims), keep).get_output(0), [x])
    torch.testing.assert_close(out, reference(x))


@pytest.mark.parametrize("op, reference", [(Op.AVG, lambda x: x.mean(-1)), (Op.SUM, lambda x: x.sum(-1))])
def test_fp16_keeps_dtype(run_network, op, reference):
    x = torch.randn(4, 16).half()
    out = run_network(lambda net, a: net.add_reduce(a, op, 1 << 1, False).get_output(0), [x])
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), reference(x.float()), atol=2e-2, rtol=1e-2)


def test_attributes_read_back(run_network):
    def define(net, a):
        layer = net.add_reduce(a, Op.MAX, 0b101, True)
        assert (layer.type, layer.op, layer.axes, layer.keep_dims) == (trt.LayerType.REDUCE, Op.MAX, 0b101, True)
        return layer.get_output(0)

    assert tuple(run_network(define, [torch.randn(2, 3, 4)]).shape) == (1, 3, 1)


REFUSED = {
    "zero_axes": ((2, 3), F32, Op.SUM, 0, "non-zero bitmask"),
    "axes_beyond_rank": ((2, 3), F32, Op.SUM, 0b100, "names a dim beyond rank 2"),
    "avg_int": ((2, 3), I32, Op.AVG, 0b1, "AVG needs a float input"),
    "bool": ((2, 3), trt.bool, Op.MAX, 0b1, "does not accept torch.bool"),
    "op_none": ((2, 3), F32, Op.NONE, 0b1, "NONE is not a reduction"),
}


@pytest.mark.parametrize("shape, dtype, op, axes, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape, dtype, op, axes, message):
    assert message in refused(lambda net, a: net.add_reduce(a, op, axes, False), [(shape, dtype)])
