"""The reference builder runs a chain of shuffles as one split, permute and merge: a view where the chain is one
(shuffles.py)."""

import pytest
import torch

import torch_trt.targets.reference as trt

from .conftest import aten_ops, program_and_kernels, shuffled

T, B, H, D = 5, 2, 3, 4  # tokens, batch, heads, head size, as nn.MultiheadAttention's head split has them



def _key_heads(network, projection):
    """nn.MultiheadAttention's packed projection (T, B, 3E) lowered: the key's slice, split into heads (B, H, T, D)
    through (T, B*H, D)."""
    packed = shuffled(network, projection, reshape=(T, B, 3, H * D), second=(2, 0, 1, 3))
    key = network.add_slice(packed, (1, 0, 0, 0), (1, T, B, H * D), (1, 1, 1, 1)).get_output(0)
    merged = shuffled(network, key, reshape=(T, B * H, D))
    transposed = shuffled(network, merged, first=(1, 0, 2))
    return shuffled(network, transposed, reshape=(B, H, T, D))


def _key_heads_eager(projection):
    key = projection.unflatten(-1, (3, H * D)).permute(2, 0, 1, 3)[1]
    return key.reshape(T, B * H, D).transpose(0, 1).reshape(B, H, T, D)




def test_the_head_split_of_a_sliced_projection_is_a_view_not_a_copy():
    program, kernels = program_and_kernels(_key_heads, (T, B, 3 * H * D))
    assert kernels == ["IShuffleLayer", "ISliceLayer", "ShuffleChain"], kernels
    x = torch.randn(T, B, 3 * H * D)
    assert "aten.clone.default" not in aten_ops(program, x)
    torch.testing.assert_close(program(x)[0], _key_heads_eager(x))


def test_the_shuffles_one_by_one_copy_the_head_split():
    """What the collapsed chain saves: run one by one, the merge of batch and heads is no view of the slice."""
    program, kernels = program_and_kernels(_key_heads, (T, B, 3 * H * D))
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
            x = shuffled(network, x, reshape=reshape) if reshape is not None else shuffled(network, x, first=(1, 0))
        return x

    program, kernels = program_and_kernels(define, shape)
    assert kernels == ["ShuffleChain"], kernels
    x = torch.randn(shape)
    torch.testing.assert_close(program(x)[0], expected(x))


def test_a_shuffle_whose_output_another_layer_reads_ends_its_chain():
    def define(network, x):
        split = shuffled(network, x, reshape=(T, B, H, D))
        heads = shuffled(network, shuffled(network, split, first=(1, 2, 0, 3)), reshape=(B * H, T, D))
        flat = shuffled(network, split, reshape=(T * B, H * D))
        return network.add_elementwise(heads, shuffled(network, flat, reshape=(B * H, T, D)),
                                       trt.ElementWiseOperation.SUM).get_output(0)

    program, kernels = program_and_kernels(define, (T, B, H * D))
    assert kernels.count("IShuffleLayer") == 1 and kernels.count("ShuffleChain") == 2, kernels
    x = torch.randn(T, B, H * D)
    expected = x.reshape(T, B, H, D).permute(1, 2, 0, 3).reshape(B * H, T, D) + x.reshape(B * H, T, D)
    torch.testing.assert_close(program(x)[0], expected)
