"""Zoo models through the reference builder's code generator (inductor, optimization_level >= 4 on CPU)."""

import pytest
import torch

import torch_trt
import transformers as hf
from counted_regions import counting
from torch_trt.targets.reference import program as reference_program
from zoo import TEXT, MainOutput, VisionOnly, build


@pytest.mark.parametrize("name", ["gpt2"])
def test_generated_engine_matches_eager(name):
    """GPT-2's attention made the generated program view an expanded operand whose strides inductor saw otherwise."""
    model, inputs = build(name)
    compiled = torch_trt.compile(model, inputs=inputs, target="reference", allow_traced_control_flow=True,
                                 optimization_level=5, require_full_compilation=True)
    with torch.no_grad():
        expected, actual = model(*inputs), compiled(*inputs)
    expected = expected[0] if isinstance(expected, (tuple, list)) else getattr(expected, "logits", expected)
    actual = actual[0] if isinstance(actual, (tuple, list)) else actual
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)


LAYERS = 4
TOKENS = torch.randint(3, 99, (2, 8), generator=torch.Generator().manual_seed(0))
DEEPER = {  # zoo architectures with LAYERS layers
    "bert": lambda: (MainOutput(hf.BertModel(hf.BertConfig(**{**TEXT, "num_hidden_layers": LAYERS}))), [TOKENS]),
    "vit": lambda: (VisionOnly(hf.ViTModel(hf.ViTConfig(hidden_size=32, num_hidden_layers=LAYERS, num_attention_heads=2,
                                                        intermediate_size=37, image_size=32, patch_size=8))),
                    [torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))]),
    "llama": lambda: (MainOutput(hf.LlamaModel(hf.LlamaConfig(**{**TEXT, "num_hidden_layers": LAYERS},
                                                              num_key_value_heads=1))), [TOKENS]),
}


@pytest.mark.parametrize("name", sorted(DEEPER))
def test_a_transformers_layers_run_one_regions_code(monkeypatch, name):
    """Regional code generation (targets/reference/regions.py) on real transformers: post-norm (BERT), pre-norm
    (ViT: two values cross from layer to layer, the residual stream and its normalization) and RMS-norm (Llama)
    layers each become one region run once per layer, computing what eager does. On CUDA, unfrozen programs take
    this path; here the CPU takes it too, each region run as its traced graph instead of inductor's code."""
    monkeypatch.setitem(reference_program.CODEGEN_LEVEL, "cpu", 3)
    monkeypatch.setattr(reference_program, "_freezes", lambda program, device: False)
    stand_in, generated = counting(lambda region, examples, patches: region)
    monkeypatch.setattr(reference_program, "_inductor", stand_in)
    torch.manual_seed(0)
    model, inputs = DEEPER[name]()
    model.eval()
    compiled = torch.compile(model, backend="tensorrt", options={"require_full_compilation": True})
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-4, atol=1e-4)
    calls = [count for _, count in generated]
    assert max(calls) >= LAYERS - 1 and len(calls) <= 3, calls
