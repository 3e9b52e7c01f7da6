"""The benchmarked models and their inputs: ResNet-50, BERT-base (sequence 128) and ViT-B/16, random weights.

Every model is built with the same seed, so two builds have the same weights and the same inputs; no
weights are downloaded. `tiny=True` gives a small configuration of the same architecture for CPU smoke runs.
"""

import functools
from dataclasses import dataclass
from typing import Callable

import torch

SEED = 0
SEQUENCE_LENGTH = 128
IMAGE_SIZE, TINY_IMAGE_SIZE = 224, 64


class WorkloadUnavailable(RuntimeError):
    """A model's library cannot be imported here (torchvision on a machine without a matching build)."""


@dataclass(frozen=True)
class Workload:
    """A model label, a builder of the fp32 eval-mode module and a builder of its inputs for a batch size."""

    label: str
    build: Callable[[], torch.nn.Module]
    make_inputs: Callable[[int], tuple]


class LastHiddenState(torch.nn.Module):
    """BERT's last hidden state alone, so every backend returns one tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).last_hidden_state


def resnet50(tiny=False, **_):
    """torchvision's ResNet-50; tiny keeps the architecture and shrinks the images."""
    models = _torchvision_models()
    size = TINY_IMAGE_SIZE if tiny else IMAGE_SIZE
    label = f"ResNet-50 {size}px" if tiny else "ResNet-50"
    return Workload(label, lambda: models.resnet50(weights=None), lambda batch: (_images(batch, size),))


def vit_b_16(tiny=False, **_):
    """torchvision's ViT-B/16; tiny is a two-layer, narrow vision transformer on small images."""
    models = _torchvision_models()
    if tiny:
        label, size = "ViT tiny", TINY_IMAGE_SIZE
        make = functools.partial(models.VisionTransformer, image_size=size, patch_size=16, num_layers=2, num_heads=2,
                                 hidden_dim=64, mlp_dim=128)
    else:
        label, size, make = "ViT-B/16", IMAGE_SIZE, functools.partial(models.vit_b_16, weights=None)

    def build():
        model = make()
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)  # torchvision zeroes it: every output would be 0
        return model

    return Workload(label, build, lambda batch: (_images(batch, size),))


def bert(tiny=False, attention="sdpa"):
    """transformers' BERT-base (BertConfig defaults) on random token ids; tiny is two narrow layers."""
    from transformers import BertConfig, BertModel

    sizes = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64) if tiny else {}
    config = BertConfig(attn_implementation=attention, **sizes)
    label = f"BERT-{'tiny' if tiny else 'base'} s{SEQUENCE_LENGTH}"

    def build():
        return LastHiddenState(BertModel(config, add_pooling_layer=False))

    return Workload(label, build, lambda batch: (_token_ids(batch, config.vocab_size),))


WORKLOADS = {"resnet50": resnet50, "bert": bert, "vit_b_16": vit_b_16}


def load(workload, device, dtype):
    """The workload's model, seeded, in eval mode on `device` in `dtype`."""
    torch.manual_seed(SEED)
    return workload.build().eval().to(device=device, dtype=dtype)


def inputs_for(workload, batch, device, dtype):
    """The workload's inputs for `batch` on `device`; floating-point inputs in `dtype`, token ids unchanged."""
    return tuple(t.to(device=device, dtype=dtype if t.is_floating_point() else t.dtype)
                 for t in workload.make_inputs(batch))


def _torchvision_models():
    """torchvision.models, or WorkloadUnavailable saying why it cannot be imported."""
    try:
        import torchvision
    except (ImportError, RuntimeError) as error:  # RuntimeError: a torchvision built for another torch
        raise WorkloadUnavailable(f"torchvision cannot be imported ({type(error).__name__}: {error})") from error
    return torchvision.models


def _images(batch, size):
    """Seeded random images of shape (batch, 3, size, size)."""
    return torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(SEED))


def _token_ids(batch, vocab_size):
    """Seeded random token ids of shape (batch, SEQUENCE_LENGTH)."""
    return torch.randint(0, vocab_size, (batch, SEQUENCE_LENGTH), generator=torch.Generator().manual_seed(SEED))
