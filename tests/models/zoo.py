"""Small HuggingFace transformers models with random weights, built from configs (nothing is downloaded)."""

import torch
import transformers as hf


class MainOutput(torch.nn.Module):
    """The model's first output (last_hidden_state or logits) for tensor arguments: one tensor to compare."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        return self.model(*inputs, return_dict=False)[0]


class VisionOnly(MainOutput):
    """A vision model called with pixel_values as a keyword (its first parameter may be something else)."""

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values, return_dict=False)[0]


def _tokens(vocab, length=8, batch=2):
    return torch.randint(3, vocab, (batch, length), generator=torch.Generator().manual_seed(0))


def _pixels(channels, size, batch=2):
    return torch.randn(batch, channels, size, size, generator=torch.Generator().manual_seed(0))


TEXT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
            max_position_embeddings=64)

ZOO = {  # name: () -> (model, example inputs)
    "bert": lambda: (MainOutput(hf.BertModel(hf.BertConfig(**TEXT))), [_tokens(99)]),
    "gpt2": lambda: (MainOutput(hf.GPT2Model(hf.GPT2Config(
        vocab_size=99, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=1, eos_token_id=2))),
        [_tokens(99)]),
    "llama": lambda: (MainOutput(hf.LlamaModel(hf.LlamaConfig(**TEXT, num_key_value_heads=1))), [_tokens(99)]),
    "qwen2": lambda: (MainOutput(hf.Qwen2Model(hf.Qwen2Config(**TEXT, num_key_value_heads=1))), [_tokens(99)]),
    "t5_encoder": lambda: (MainOutput(hf.T5EncoderModel(hf.T5Config(vocab_size=99, d_model=32, d_kv=16, d_ff=37,
                                                                    num_layers=2, num_heads=2))), [_tokens(99)]),
    "clip_text": lambda: (MainOutput(hf.CLIPTextModel(hf.CLIPTextConfig(**TEXT, pad_token_id=0, bos_token_id=1,
                                                                              eos_token_id=2))), [_tokens(99)]),
    "clip_vision": lambda: (VisionOnly(hf.CLIPVisionModel(hf.CLIPVisionConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37, image_size=32,
        patch_size=8))), [_pixels(3, 32)]),
    "whisper_encoder": lambda: (MainOutput(hf.WhisperModel(hf.WhisperConfig(
        vocab_size=99, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, d_model=32,
        encoder_layers=2, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=37, decoder_ffn_dim=37, num_mel_bins=16, max_source_positions=30)).get_encoder()),
        [torch.randn(2, 16, 60, generator=torch.Generator().manual_seed(0))]),
    "vit": lambda: (VisionOnly(hf.ViTModel(hf.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                        intermediate_size=37, image_size=32, patch_size=8))),
                    [_pixels(3, 32)]),
    "swin": lambda: (VisionOnly(hf.SwinModel(hf.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                                                           num_heads=[2, 2], window_size=4))), [_pixels(3, 32)]),
    "convnext": lambda: (VisionOnly(hf.ConvNextModel(hf.ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1],
                                                                       num_stages=2, image_size=32))),
                         [_pixels(3, 32)]),
    "deberta_v2": lambda: (MainOutput(hf.DebertaV2Model(hf.DebertaV2Config(**TEXT))), [_tokens(99)]),
    "gpt_neo": lambda: (MainOutput(hf.GPTNeoModel(hf.GPTNeoConfig(
        vocab_size=99, hidden_size=32, num_layers=2, num_heads=2, attention_types=[[["global", "local"], 1]],
        window_size=4, max_position_embeddings=64))), [_tokens(99)]),
    # tf_padding (the default): TensorFlow's "same" padding is an aten::pad before each convolution
    "mobilenet_v2": lambda: (VisionOnly(hf.MobileNetV2Model(hf.MobileNetV2Config(
        image_size=32, depth_multiplier=0.25))), [_pixels(3, 32)]),
    "resnet": lambda: (VisionOnly(hf.ResNetModel(hf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16],
                                                                 depths=[1, 1]))), [_pixels(3, 32)]),
}


def build(name):
    """(model in eval mode, example inputs) for a zoo entry, with the same weights on every call."""
    torch.manual_seed(0)
    model, inputs = ZOO[name]()
    return model.eval(), inputs
