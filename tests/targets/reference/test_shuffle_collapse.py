"""The reference builder runs a chain of shuffles as one split, permute and merge: a view where the chain is one
(shuffles.py)."""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torch_trt.targets.reference as trt

from .conftest import host_engine

T, B, H, D = 5, 2, 3, 4  # tokens, batch, heads, head size, as nn.MultiheadAttention's head split has them


def _shuffle(network, tensor, first=None, reshape=None, second=None):
    layer = network.add_shuffle(tensor)
    if first is not None:
        layer.first_transpose = first
    if reshape is not None:
        layer.reshape_dims = reshape
    if second is not None:
        layer.second_transpose = second
    return layer.get_output(0)


def _key_heads(network, projection):
    """nn.MultiheadAttention's packed projection (T, B, 3E) lowered: the key's slice, split into heads (B, H, T, D)
    through (T, B*H, D)."""
    packed = _shuffle(network, projection, reshape=(T, B, 3, H * D), second=(2, 0, 1, 3))
    key = network.add_slice(packed, (1, 0, 0, 0), (1, T, B, H * D), (1, 1, 1, 1)).get_output(0)
    merged = _shuffle(network, key, reshape=(T, B * H, D))
    transposed = _shuffle(network, merged, first=(1, 0, 2))
    return _shuffle(network, transposed, reshape=(B, H, T, D))


def _key_heads_eager(projection):
    key = projection.unflatten(-1, (3, H * D)).permute(2, 0, 1, 3)[1]
    return key.reshape(T, B * H, D).transpose(0, 1).reshape(B, H, T, D)


def _program_and_kernels(define, shape):
    program = host_engine(define, shape=shape)[1]._module
    kernels = [type(node.target.__self__).__name__ for node in program.graph.nodes
               if node.op == "call_function" and hasattr(node.target, "__self__")]
    return program, kernels


def _ops(program, x):
    return [str(node.target) for node in make_fx(program)(x).graph.nodes if node.op == "call_function"]


def test_the_head_split_of_a_sliced_projection_is_a_view_not_a_copy():
    program, kernels = _program_and_kernels(_key_heads, (T, B, 3 * H * D))
    assert kernels == ["IShuffleLayer", "ISliceLayer", "ShuffleChain"], kernels
    x = torch.randn(T, B, 3 * H * D)
    assert "aten.clone.default" not in _ops(program, x)
    torch.testing.assert_close(program(x)[0], _key_heads_eager(x))


def test_the_shuffles_one_by_one_copy_the_head_split():
    """What the collapsed chain saves: run one by one, the merge of batch and heads is no view of the slice."""
    program, kernels = _program_and_kernels(_key_heads, (T, B, 3 * H * D))
    chain = next(node.target.__self__ for node in program.graph.nodes
                 if type(getattr(node.target, "__self__", None)).__name__ == "ShuffleChain"
                 and len(node.target.__self__.layers) == 3)
    sliced = torch.randn(1, T, B, 3 * H * D)[..., H * D:2 * H * D]
    one_by_one = sliced
    for layer in chain.layers:
        one_by_one = layer._compute([one_by_one], {})
    collapsed = chain._compute([sliced], {})
    assert collapsed.untyped_storage().data_ptr() == sliced.untyped_storage().data_ptr()
    assert one_by_one.untyped_storage().data_ptr() != sliced.untyped_storage().data_ptr()
    torch.testing.assert_close(collapsed, one_by_one)


@pytest.mark.parametrize("shape,reshapes,expected", [
    ((4, 3), [(3, 4), (2, 6)], lambda x: x.reshape(3, 4).reshape(2, 6)),
    ((4, 3), [(3, 4), None], lambda x: x.reshape(3, 4).T),
    ((2, 3, 4), [(0, -1), (4, 6)], lambda x: x.reshape(2, 12).reshape(4, 6)),
    ((1, 1), [(1,), ()], lambda x: x.reshape(())),
], ids=["factors_do_not_divide", "transposed_after_a_reshape_that_does_not_divide", "placeholders", "to_rank_0"])
def test_chains_that_are_no_single_view_give_what_the_shuffles_give(shape, reshapes, expected):
    def define(network, x):
        for reshape in reshapes:
            x = _shuffle(network, x, reshape=reshape) if reshape is not None else _shuffle(network, x, first=(1, 0))
        return x

    program, kernels = _program_and_kernels(define, shape)
    assert kernels == ["ShuffleChain"], kernels
    x = torch.randn(shape)
    torch.testing.assert_close(program(x)[0], expected(x))


def test_a_shuffle_whose_output_another_layer_reads_ends_its_chain():
    def define(network, x):
        split = _shuffle(network, x, reshape=(T, B, H, D))
        heads = _shuffle(network, _shuffle(network, split, first=(1, 2, 0, 3)), reshape=(B * H, T, D))
        flat = _shuffle(network, split, reshape=(T * B, H * D))
        return network.add_elementwise(heads, _shuffle(network, flat, reshape=(B * H, T, D)),
                                       trt.ElementWiseOperation.SUM).get_output(0)

    program, kernels = _program_and_kernels(define, (T, B, H * D))
    assert kernels.count("IShuffleLayer") == 1 and kernels.count("ShuffleChain") == 2, kernels
    x = torch.randn(T, B, H * D)
    expected = x.reshape(T, B, H, D).permute(1, 2, 0, 3).reshape(B * H, T, D) + x.reshape(B * H, T, D)
    torch.testing.assert_close(program(x)[0], expected)
