"""torch.compile(backend="tensorrt") on whole models: outputs match eager, and the partition is the expected one."""

import torch
from torch import nn

from dynamo_harness import check_compiled, engines_per_build, pytorch_ops
from quickstart import EncoderBlock, ResidualCNN  # the quickstart's own models (examples/ is on the test path)

FULL = {"require_full_compilation": True}


def test_small_cnn(builds, device):
    check_compiled(ResidualCNN(channels=8).eval(), [(torch.randn(2, 3, 16, 16),)], FULL, device=device)
    assert engines_per_build(builds) == [1] and pytorch_ops(builds) == []


def test_small_cnn_dynamic_batch_builds_once(builds):
    check_compiled(ResidualCNN(channels=8).eval(), [(torch.randn(b, 3, 16, 16),) for b in (4, 7, 1)], FULL, dynamic=True)
    assert engines_per_build(builds) == [1] and pytorch_ops(builds) == []


def test_transformer_encoder_block(builds, device):
    check_compiled(EncoderBlock().eval(), [(torch.randn(2, 6, 64),)], FULL, device=device)
    assert engines_per_build(builds) == [1] and pytorch_ops(builds) == []


def test_graph_break_compiles_each_graph(builds):
    class PrintsInTheMiddle(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 2)

        def forward(self, x):
            x = torch.relu(self.fc1(x))
            print("between the graphs")
            return torch.sigmoid(self.fc2(x))

    check_compiled(PrintsInTheMiddle().eval(), [(torch.randn(3, 4),)])
    assert engines_per_build(builds) == [1, 1] and pytorch_ops(builds) == []


def test_item_graph_break(builds):
    class ScalesByItsMax(nn.Module):
        def forward(self, x):
            return torch.relu(x) * float(x.max().item())

    check_compiled(ScalesByItsMax(), [(torch.randn(3, 4),), (torch.randn(3, 4),)])
    # x.max() before the break; relu(x) * scale after it, built again for the second call's other scale
    assert engines_per_build(builds) == [1, 1, 1] and pytorch_ops(builds) == []


def test_dict_and_tuple_results(builds):
    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 6)

        def forward(self, x):
            y = self.fc(x)
            return {"logits": torch.relu(y), "pair": (torch.sigmoid(y), x * 2)}

    model = Heads().eval()
    x = torch.randn(3, 4)
    check_compiled(model, [(x,)])
    out = torch.compile(model, backend="tensorrt", options={"target": "reference", "min_block_size": 1})(x)
    assert set(out) == {"logits", "pair"} and isinstance(out["pair"], tuple)
    assert engines_per_build(builds) == [1] and pytorch_ops(builds) == []


def check_huggingface(model, ids):
    """The compiled model's hidden states match eager."""
    compiled = torch.compile(model, backend="tensorrt", options={"target": "reference", "min_block_size": 1})
    with torch.no_grad():
        expected, actual = model(ids), compiled(ids)
    torch.testing.assert_close(actual.last_hidden_state, expected.last_hidden_state, rtol=1e-4, atol=1e-4)
    return expected, actual


def test_huggingface_bert(builds):
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=32)
    expected, actual = check_huggingface(BertModel(config).eval(), torch.randint(0, 64, (2, 12)))
    torch.testing.assert_close(actual.pooler_output, expected.pooler_output, rtol=1e-4, atol=1e-4)
    # the int64 ids enter the engine (TensorRT 10+ takes int64) and SDPA converts: the whole model is one engine
    assert engines_per_build(builds) == [1]
    assert pytorch_ops(builds) == []


def test_huggingface_gpt2(builds):
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=32, bos_token_id=0,
                        eos_token_id=0, attn_implementation="eager")
    expected, actual = check_huggingface(GPT2Model(config).eval(), torch.randint(0, 64, (2, 12)))
    # int64 ids, the split of the fused QKV projection and the casts all convert: the whole model is one engine
    assert engines_per_build(builds) == [1]
    assert pytorch_ops(builds) == []
    for want, got in zip(expected.past_key_values.layers, actual.past_key_values.layers):
        torch.testing.assert_close(got.keys, want.keys, rtol=1e-4, atol=1e-4)


class VisionTransformerBlock(nn.Module):
    """A torchvision-style ViT: patch convolution, class token, nn.MultiheadAttention blocks (traced size math)."""

    def __init__(self):
        super().__init__()
        self.patches, self.token = nn.Conv2d(3, 32, 8, 8), nn.Parameter(torch.zeros(1, 1, 32))
        self.norm, self.attention = nn.LayerNorm(32), nn.MultiheadAttention(32, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.LayerNorm(32), nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))

    def forward(self, x):
        x = self.patches(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.token.expand(x.shape[0], -1, -1), x], dim=1)
        y = self.norm(x)
        x = x + self.attention(y, y, y, need_weights=False)[0]
        return (x + self.mlp(x))[:, 0]


def test_multihead_attention_size_math_stays_in_the_engine(builds):
    check_compiled(VisionTransformerBlock().eval(), [[torch.randn(2, 3, 32, 32)]])
    assert engines_per_build(builds) == [1] and pytorch_ops(builds) == []
