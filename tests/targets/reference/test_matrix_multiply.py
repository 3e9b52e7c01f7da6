import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt

N, T, V = trt.MatrixOperation.NONE, trt.MatrixOperation.TRANSPOSE, trt.MatrixOperation.VECTOR
F32, F16, I32 = trt.float32, trt.float16, trt.int32

# (shape0, op0, shape1, op1, reference in PyTorch on the inputs as given)
CASES = {
    "mat_mat": ((3, 4), N, (4, 5), N, torch.matmul),
    "trans_mat": ((4, 3), T, (4, 5), N, lambda a, b: a.mT @ b),
    "mat_trans": ((3, 4), N, (5, 4), T, lambda a, b: a @ b.mT),
    "trans_trans": ((4, 3), T, (5, 4), T, lambda a, b: a.mT @ b.mT),
    "batched": ((2, 3, 4), N, (2, 4, 5), N, torch.matmul),
    "batched_trans": ((2, 4, 3), T, (2, 5, 4), T, lambda a, b: a.mT @ b.mT),
    "broadcast_batch": ((2, 1, 3, 4), N, (1, 5, 4, 6), N, torch.matmul),
    "broadcast_batch_rank5": ((1, 2, 1, 3, 4), N, (3, 1, 2, 4, 2), N, torch.matmul),
    "mat_vec": ((3, 4), N, (4,), V, torch.matmul),
    "vec_mat": ((4,), V, (4, 5), N, torch.matmul),
    "vec_vec": ((4,), V, (4,), V, torch.matmul),
    "vec_trans": ((4,), V, (5, 4), T, lambda a, b: torch.matmul(a, b.mT)),
    "trans_vec": ((4, 3), T, (4,), V, lambda a, b: torch.matmul(a.mT, b)),
    "batched_mat_vec": ((2, 3, 4), N, (2, 4), V, lambda a, b: torch.einsum("bmk,bk->bm", a, b)),
    "batched_vec_mat": ((2, 4), V, (2, 4, 5), N, lambda a, b: torch.einsum("bk,bkn->bn", a, b)),
    "batched_vec_vec": ((2, 4), V, (2, 4), V, lambda a, b: torch.einsum("bk,bk->b", a, b)),
    "broadcast_vec_vec": ((1, 4), V, (3, 4), V, lambda a, b: (a * b).sum(-1)),
    "broadcast_mat_vec": ((1, 3, 4), N, (2, 4), V, lambda a, b: torch.einsum("mk,bk->bm", a[0], b)),
    "shared_matrix": ((5, 1, 4), N, (1, 4, 3), N, torch.matmul),
    "shared_matrix_trans": ((2, 5, 4), N, (1, 3, 4), T, lambda a, b: a @ b.mT),
    "shared_matrix_vec": ((2, 5, 4), N, (1, 4), V, lambda a, b: a @ b[0]),
    "shared_matrix_vec_a": ((2, 4), V, (1, 4, 3), N, lambda a, b: a @ b[0]),
}


@pytest.mark.parametrize("shape0, op0, shape1, op1, reference", CASES.values(), ids=CASES.keys())
def test_matches_pytorch(run_network, shape0, op0, shape1, op1, reference):
    a, b = torch.randn(shape0), torch.randn(shape1)
    out = run_network(lambda net, x, y: net.add_matrix_multiply(x, op0, y, op1).get_output(0), [a, b])
    torch.testing.assert_close(out, reference(a, b))


SHARED_MATRIX = {  # (input0 as given, op0, input1): input1 has unit batch dims
    "sequence_first": (torch.randn(1, 197, 8).transpose(0, 1), N, (1, 8, 6)),  # a linear layer in nn.MultiheadAttention
    "rank4": (torch.randn(2, 3, 5, 8).transpose(1, 2), N, (1, 1, 8, 6)),
    "transposed": (torch.randn(4, 8, 5), T, (1, 8, 6)),
    "vector": (torch.randn(3, 2, 8), V, (1, 1, 8, 6)),
}


@pytest.mark.parametrize("a, op0, shape1", SHARED_MATRIX.values(), ids=SHARED_MATRIX.keys())
def test_a_matrix_shared_by_the_batch_is_one_gemm(a, op0, shape1):
    """A weight with unit batch dims (a linear layer's, unsqueezed to the input's rank) multiplies all of the
    input's rows in one mm, whatever their strides: a bmm would run one small product per batch entry, each
    reading the whole weight."""
    layer = trt.IMatrixMultiplyLayer.__new__(trt.IMatrixMultiplyLayer)
    layer.op0, layer.op1 = op0, N
    b = torch.randn(shape1)
    graph = make_fx(lambda x, y: layer._compute([x, y], {}))(a, b)
    torch.testing.assert_close(graph(a, b), layer._compute([a, b], {}))
    targets = {node.target for node in graph.graph.nodes}
    assert torch.ops.aten.mm.default in targets and torch.ops.aten.bmm.default not in targets


@pytest.mark.parametrize("dtype, tolerance", [(torch.float16, 1e-2), (torch.bfloat16, 5e-2)])
def test_half_precision_keeps_dtype(run_network, dtype, tolerance):
    a, b = torch.randn(2, 3, 8).to(dtype), torch.randn(2, 8, 5).to(dtype)
    out = run_network(lambda net, x, y: net.add_matrix_multiply(x, N, y, N).get_output(0), [a, b])
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), a.float() @ b.float(), atol=tolerance, rtol=tolerance)


def test_attributes_read_back_and_can_be_changed(run_network):
    a, b = torch.randn(4, 4), torch.randn(4, 5)

    def define(net, x, y):
        layer = net.add_matrix_multiply(x, N, y, N)
        assert (layer.type, layer.op0, layer.op1) == (trt.LayerType.MATRIX_MULTIPLY, N, N)
        layer.op0 = T
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [a, b]), a.mT @ b)


REFUSED = {
    "dtype_mismatch": ((2, 3), F32, N, (3, 4), F16, N, "same dtype"),
    "int32": ((2, 3), I32, N, (3, 4), I32, N, "float inputs"),
    "rank_for_matrix": ((3,), F32, N, (3, 4), F32, N, "(3,) [NONE] needs rank >= 2"),
    "rank_for_vector": ((), F32, V, (3,), F32, V, "() [VECTOR] needs rank >= 1"),
    "batch_count": ((2, 3, 4), F32, N, (4, 5), F32, N, "different numbers of batch dims"),
    "vector_batch_count": ((3, 4), F32, V, (4, 5), F32, N, "different numbers of batch dims"),
    "batch_broadcast": ((2, 3, 4), F32, N, (3, 4, 5), F32, N, "not broadcastable"),
    "inner": ((3, 4), F32, N, (5, 6), F32, N, "inner dimensions differ: (3, 4) [NONE] and (5, 6) [NONE]"),
    "inner_transposed": ((3, 4), F32, T, (3, 6), F32, T, "(3, 4) [TRANSPOSE] and (3, 6) [TRANSPOSE] contract 3 with 6"),
    "inner_vector": ((3, 4), F32, N, (5,), F32, V, "contract 4 with 5"),
}


@pytest.mark.parametrize("shape0, dtype0, op0, shape1, dtype1, op1, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, shape0, dtype0, op0, shape1, dtype1, op1, message):
    define = lambda net, a, b: net.add_matrix_multiply(a, op0, b, op1)
    assert message in refused(define, [(shape0, dtype0), (shape1, dtype1)])
