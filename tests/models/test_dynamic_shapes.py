"""BERT and GPT-2 with dynamic batch (1..32) and sequence length (8..128) compile into one engine each, and GPT-2's
generate() through torch.compile builds a bounded number of engines, not one a token.

Traced as torch_trt.compile traces transformers models, their sizes of dynamic dims become shape
tensors inside the engine (conversion/shape_tensors.py): the attention heads' reshapes, the position
ids' slice or arange and the token type ids' expand all run there. Each model must match eager fp32
within 1e-4 relative at shapes across the range. The zoo's text config (zoo.py) with 128 positions.
"""

import pytest
import torch
import transformers as hf

import torch_trt
from torch_trt.backend import dynamo
from zoo import TEXT, MainOutput

RTOL = 1e-4
ENGINE = "torch_trt::execute_engine"
SPEC = torch_trt.Input(min_shape=(1, 8), opt_shape=(4, 64), max_shape=(32, 128), dtype=torch.int64)
SHAPES = [(1, 8), (3, 17), (32, 128)]
MODELS = {
    "bert": lambda: MainOutput(hf.BertModel(hf.BertConfig(**{**TEXT, "max_position_embeddings": 128}))),
    "gpt2": lambda: MainOutput(hf.GPT2Model(hf.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=2,
                                                          n_positions=128, bos_token_id=1, eos_token_id=2))),
}


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_dynamic_batch_and_sequence_compile_to_one_engine(name):
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    with torch.no_grad():
        compiled = torch_trt.compile(model, inputs=[SPEC], target="reference", allow_traced_control_flow=True,
                                     require_full_compilation=True)
    assert str(compiled.graph).count(ENGINE) == 1, compiled.graph
    generator = torch.Generator().manual_seed(0)
    for shape in SHAPES:
        tokens = torch.randint(3, 99, shape, generator=generator)
        with torch.no_grad():
            expected, actual = model(tokens), compiled(tokens)
        torch.testing.assert_close(actual, expected, rtol=RTOL, atol=RTOL * expected.abs().max())


@pytest.mark.parametrize("padded", [False, True], ids=["batch_of_one", "left_padded_batch"])
def test_generate_builds_engines_for_prefill_and_decoding_not_per_token(padded, fresh_dynamo, monkeypatch):
    """With a left-padded batch, the decoding step's attention mask is one longer than its KV cache, which dynamo
    guards as two inequalities: every token built an engine of its own (20 for 20 tokens)."""
    builds = []
    compile_frozen = dynamo.compile_frozen
    monkeypatch.setattr(dynamo, "compile_frozen", lambda *args: builds.append(args) or compile_frozen(*args))
    torch.manual_seed(0)
    config = hf.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=2, n_positions=128, bos_token_id=1,
                           eos_token_id=2, pad_token_id=0)
    model = hf.GPT2LMHeadModel(config).eval()
    tokens = torch.randint(3, 99, (2 if padded else 1, 6))
    mask = torch.ones_like(tokens)
    mask[0, :2 * padded] = 0  # the first row is two tokens shorter
    generation = {"attention_mask": mask, "max_new_tokens": 20, "do_sample": False, "min_new_tokens": 20}
    with torch.no_grad():
        expected = model.generate(tokens, **generation)
        model.forward = torch.compile(model.forward, backend="tensorrt", options={"target": "reference"})
        actual = model.generate(tokens, **generation)
    assert torch.equal(actual, expected)
    assert len(builds) == 3  # prefill, the first decoding step (static), then one dynamic engine for the rest
