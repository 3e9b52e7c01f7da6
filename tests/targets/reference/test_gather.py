import re

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt

G = trt.GatherMode
D = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)


def _ints(values, dtype=torch.int32):
    return torch.tensor(values, dtype=dtype)


def _gather_v2(net, data, indices, mode, axis, elementwise_dims):
    """add_gather_v2, then set axis and num_elementwise_dims as converters do."""
    layer = net.add_gather_v2(data, indices, mode)
    if layer is not None:
        layer.axis, layer.num_elementwise_dims = axis, elementwise_dims
    return layer


# (data, indices, mode, axis, num_elementwise_dims, expected)
IDX_A = _ints([[0, 2, 1], [3, 3, 0]])
IDX_B = _ints([[1, 0, 3], [2, 2, 2], [0, 1, 1]], torch.int64)
IDX_E = _ints([[[0, 2], [1, 1]], [[2, 0], [0, 0]]])
IDX_N = _ints([[0, 1], [2, 3], [1, 0]], torch.int64)
IDX_NB = _ints([[[1], [3]], [[0], [0]], [[2], [1]]])
CASES = {
    "default_axis0": (D, _ints([2, 0]), G.DEFAULT, 0, 0, D[[2, 0]]),
    "default_axis1_2d_indices": (D, IDX_A, G.DEFAULT, 1, 0, D[:, IDX_A.long()]),
    "default_scalar_index": (D, _ints(4), G.DEFAULT, 2, 0, D[:, :, 4]),
    "default_int64_indices": (D, IDX_A.long(), G.DEFAULT, 2, 0, D[:, :, IDX_A.long()]),
    "default_elementwise": (D, IDX_B, G.DEFAULT, 1, 1, torch.stack([D[b, IDX_B[b]] for b in range(3)])),
    "default_elementwise_broadcast": (D, IDX_B[:1], G.DEFAULT, 2, 1,
                                      torch.stack([D[b][:, IDX_B[0]] for b in range(3)])),
    "default_int32_data": (D.int(), _ints([1]), G.DEFAULT, 0, 0, D.int()[[1]]),
    "default_int64_data": (D.long(), _ints([3, 3]), G.DEFAULT, 1, 0, D.long()[:, [3, 3]]),
    "default_bool_data": (D > 30, _ints([0, 2]), G.DEFAULT, 0, 0, (D > 30)[[0, 2]]),
    "default_fp16_data": (D.half(), _ints([4, 0]), G.DEFAULT, 2, 0, D.half()[:, :, [4, 0]]),
    "element_axis0": (D[:, :2, :2], IDX_E, G.ELEMENT, 0, 0, torch.gather(D[:, :2, :2], 0, IDX_E.long())),
    "element_axis2_smaller": (D, IDX_E.long(), G.ELEMENT, 2, 0, torch.gather(D, 2, IDX_E.long())),
    "element_larger_on_axis": (D[:2, :2], _ints([[[3] * 6]]), G.ELEMENT, 2, 0, D[:1, :1, [3] * 6]),
    "element_fp16": (D.half(), IDX_E, G.ELEMENT, 1, 0, torch.gather(D.half(), 1, IDX_E.long())),
    "nd_pairs": (D, IDX_N, G.ND, 0, 0, D[IDX_N[:, 0], IDX_N[:, 1]]),
    "nd_full": (D, _ints([[2, 3, 4], [0, 0, 1]]), G.ND, 0, 0, D[[2, 0], [3, 0], [4, 1]]),
    "nd_scalar_output": (D, _ints([2, 3, 4]), G.ND, 0, 0, D[2, 3, 4]),
    "nd_elementwise": (D, IDX_NB, G.ND, 0, 1, torch.stack([D[b][IDX_NB[b, :, 0].long()] for b in range(3)])),
    "nd_bool": (D > 30, IDX_N, G.ND, 0, 0, (D > 30)[IDX_N[:, 0], IDX_N[:, 1]]),
}


@pytest.mark.parametrize("data, indices, mode, axis, elementwise_dims, expected", CASES.values(), ids=CASES.keys())
def test_gather_matches_torch(run_network, data, indices, mode, axis, elementwise_dims, expected):
    def define(net, d, i):
        return _gather_v2(net, d, i, mode, axis, elementwise_dims).get_output(0)

    torch.testing.assert_close(run_network(define, [data, indices]), expected)


def test_add_gather_sets_axis(run_network):
    def define(net, d, i):
        layer = net.add_gather(d, i, 1)
        assert (layer.type, layer.mode, layer.axis) == (trt.LayerType.GATHER, G.DEFAULT, 1)
        assert layer.num_elementwise_dims == 0
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [D, _ints([3, 1])]), D[:, [3, 1]])


BAD_INDICES = {
    "default_negative": (G.DEFAULT, 1, 0, _ints([0, -1]), "outside [0, 4) of dim 1"),
    "default_too_large": (G.DEFAULT, 1, 0, _ints([4]), "outside [0, 4) of dim 1"),
    "element_negative": (G.ELEMENT, 2, 0, _ints([[[-5]]]), "outside [0, 5) of dim 2"),
    "element_beyond_other_dim": (G.ELEMENT, 2, 0, _ints([[[0]]] * 4), "outside [0, 3) of dim 0"),
    "nd_negative": (G.ND, 0, 0, _ints([[0, -4]]), "outside [0, 4) of dim 1"),
    "nd_too_large": (G.ND, 0, 0, _ints([[3, 0]]), "outside [0, 3) of dim 0"),
}


@pytest.mark.parametrize("mode, axis, elementwise_dims, indices, message", BAD_INDICES.values(),
                         ids=BAD_INDICES.keys())
def test_gather_out_of_range_raises_at_run_time(run_network, mode, axis, elementwise_dims, indices, message):
    def define(net, d, i):
        return _gather_v2(net, d, i, mode, axis, elementwise_dims).get_output(0)

    with pytest.raises(RuntimeError, match=re.escape(message)):
        run_network(define, [D, indices])


@pytest.mark.parametrize("mode, axis, indices", [(G.DEFAULT, 1, _ints([[0, 3], [2, 1]])),
                                                 (G.ELEMENT, 2, _ints([[[0, 4]], [[1, 1]]])),
                                                 (G.ND, 0, _ints([[0, 1], [2, 3]]))])
def test_only_the_layers_indices_are_checked_on_the_device(mode, axis, indices):
    """One range assert per indices tensor: the aranges that address the other dims are in range by construction,
    and each assert is a kernel launch of its own on every call."""
    layer = trt.IGatherLayer.__new__(trt.IGatherLayer)
    layer.mode, layer.axis, layer.num_elementwise_dims = mode, axis, 0
    graph = make_fx(lambda d, i: layer._compute.__wrapped__(layer, [d, i], {}))(D, indices)
    asserts = [node for node in graph.graph.nodes if node.target is torch.ops.aten._assert_async.msg]
    assert len(asserts) == (2 if mode == G.ND else 1)


@pytest.mark.parametrize("elementwise_dims, lookup", [(0, "aten.index_select.default"), (1, "aten.index.Tensor")])
def test_a_gather_without_batch_dims_is_an_index_select(elementwise_dims, lookup):
    """An embedding lookup reads whole rows: index_select, not advanced indexing over a broadcast arange (95 times
    slower on the CPU for BERT-base's word embeddings)."""
    layer = trt.IGatherLayer.__new__(trt.IGatherLayer)
    layer.mode, layer.axis, layer.num_elementwise_dims = G.DEFAULT, 1, elementwise_dims
    indices = IDX_B if elementwise_dims else IDX_A
    graph = make_fx(lambda d, i: layer._compute.__wrapped__(layer, [d, i], {}))(D, indices)
    ops = {str(node.target) for node in graph.graph.nodes if node.op == "call_function"}
    assert lookup in ops, ops


def _gather(mode=G.DEFAULT, axis=0, elementwise_dims=0):
    """A define that gathers in0 with in1 (add_gather_v2) and sets the attributes; refused_at_build builds it."""
    return lambda net, data, indices: _gather_v2(net, data, indices, mode, axis, elementwise_dims)


F32_345, I32_2 = ((3, 4, 5), trt.float32), ((2,), trt.int32)
REFUSALS = {
    "float_indices": (_gather(), [F32_345, ((2,), trt.float32)], "indices must be INT32 or INT64"),
    "uint8_data": (_gather(), [((3,), trt.uint8), I32_2], "does not accept torch.uint8 data"),
    "axis_range": (lambda net, d, i: net.add_gather(d, i, 3), [F32_345, I32_2], "axis 3 is out of range"),
    "default_elementwise_2": (_gather(elementwise_dims=2, axis=2), [F32_345, I32_2], "0 or 1, got 2"),
    "default_elementwise_axis0": (_gather(elementwise_dims=1), [F32_345, ((3, 2), trt.int32)], "axis >= 1"),
    "default_elementwise_broadcast": (_gather(axis=1, elementwise_dims=1), [F32_345, ((2, 2), trt.int32)],
                                      "not broadcastable"),
    "element_elementwise": (_gather(G.ELEMENT, elementwise_dims=1), [F32_345, ((3, 4, 5), trt.int32)],
                            "ELEMENT needs num_elementwise_dims 0"),
    "element_rank": (_gather(G.ELEMENT), [F32_345, ((3, 4), trt.int32)], "must have the rank of data"),
    "nd_elementwise_range": (_gather(G.ND, elementwise_dims=3), [F32_345, ((3, 4, 5, 1), trt.int32)],
                             "0 <= num_elementwise_dims < rank(data)"),
    "nd_indices_rank": (_gather(G.ND, elementwise_dims=1), [F32_345, ((3,), trt.int32)], "need rank >"),
    "nd_elementwise_unequal": (_gather(G.ND, elementwise_dims=1), [F32_345, ((1, 2, 1), trt.int32)],
                               "must be equal (no broadcast)"),
    "nd_last_dim_large": (_gather(G.ND, elementwise_dims=1), [F32_345, ((3, 3), trt.int32)],
                          "last dim (3) must be a build-time constant in [1, rank(data) - num_elementwise_dims = 2]"),
    "nd_last_dim_zero": (_gather(G.ND), [F32_345, ((2, 0), trt.int32)], "last dim (0)"),
}


@pytest.mark.parametrize("define, specs, message", REFUSALS.values(), ids=REFUSALS.keys())
def test_gather_refusals(refused_at_build, define, specs, message):
    assert message in refused_at_build(define, specs)
