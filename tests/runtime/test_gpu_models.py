"""Real models on the GPU, through the runtime's device guard, streams, threads and CUDA graphs (skip without CUDA).

Errors are compared with eager at the same precision, bounded by eager's own error against fp32."""

import gc

import pytest
import torch

import torch_trt
from torch_trt.targets.reference import program as reference_program
from counted_regions import counting
from threads import run_in_threads

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def _error_bound(model, inputs, dtype):
    """Eager's max abs error at `dtype` against eager fp32, on these inputs."""
    with torch.no_grad():
        exact = model.float()(*[t.float() if t.is_floating_point() else t for t in inputs])
        low = model.to(dtype)(*inputs)
    return (low.float() - exact.float()).abs().max().item(), exact


def _check_within_eager_error(model, inputs, dtype, **settings):
    bound, exact = _error_bound(model, inputs, dtype)
    compiled = torch_trt.compile(model.to(dtype), inputs=inputs, target="reference", device="cuda:0", **settings)
    with torch.no_grad():
        got = compiled(*inputs)
    got = got[0] if isinstance(got, (tuple, list)) else got
    error = (got.float() - exact.float()).abs().max().item()
    assert error <= 2 * bound + 1e-3, f"{dtype} error {error} against fp32 eager, eager's own is {bound}"


def test_bf16_resnet50_within_eager_error():
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet50().eval().cuda()
    _check_within_eager_error(model, [torch.randn(2, 3, 224, 224, device="cuda", dtype=torch.bfloat16)],
                              torch.bfloat16)


def test_fp16_bert_base_within_eager_error_its_layers_code_generated_once(monkeypatch):
    """Within eager's error, and inductor compiles one encoder layer's code, called twelve times per engine call,
    besides the code of the ops around the layers (targets/reference/regions.py). The runtime may call the engine more
    than once (a warm-up run before its CUDA-graph capture), so the counts are per run of the code before the layers."""
    transformers = pytest.importorskip("transformers")
    stand_in, generated = counting(reference_program._inductor)
    monkeypatch.setattr(reference_program, "_inductor", stand_in)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = transformers.BertModel(transformers.BertConfig(), add_pooling_layer=False)

        def forward(self, ids):
            return self.bert(input_ids=ids).last_hidden_state

    model = Encoder().eval().cuda()
    # without a mask, transformers' SDPA branch (is_causal) is the same for every input: tracing may fix it
    _check_within_eager_error(model, [torch.randint(0, 30000, (2, 128), device="cuda")], torch.float16,
                              allow_traced_control_flow=True)
    calls = [count for _, count in generated]
    assert len(calls) <= 3 and max(calls) == 12 * calls[0], calls


def test_torch_compile_holds_the_weights_on_the_gpu_once():
    """Through torch.compile the engines read the model's own tensors (targets/reference/lending.py) instead of
    holding a device copy of each: compiling and calling BERT-base adds far less than its weights."""
    transformers = pytest.importorskip("transformers")
    model = transformers.BertModel(transformers.BertConfig(), add_pooling_layer=False).eval().cuda().half()
    ids = torch.randint(0, 30000, (1, 128), device="cuda")
    weights = sum(p.nbytes for p in model.parameters())
    with torch.no_grad():
        model(input_ids=ids)  # CUDA's and cuBLAS's first-use allocations come before the count
        gc.collect()
        before = torch.cuda.memory_allocated()
        compiled = torch.compile(model, backend="tensorrt", options={"target": "reference"})
        compiled(input_ids=ids)
        torch.cuda.synchronize()
        gc.collect()
        added = torch.cuda.memory_allocated() - before
    assert added < weights / 2, f"compiling added {added / 2**20:.0f} MiB; the weights are {weights / 2**20:.0f} MiB"


def test_torch_compile_holds_a_convolutional_networks_weights_once():
    """Batch norms are not folded into the convolutions' kernels (backend/fx_to_script.py), and the engine reading
    the model's kernels is not frozen (targets/reference/program.py), which would lay out a channels-last copy of
    each: compiling and calling adds far less than the weights."""
    blocks = [torch.nn.Sequential(torch.nn.Conv2d(512, 512, 3, padding=1, bias=False), torch.nn.BatchNorm2d(512),
                                  torch.nn.ReLU()) for _ in range(8)]
    model = torch.nn.Sequential(*blocks).eval().cuda().half()
    for block in blocks:  # statistics of a trained network, so that folding would change the weights
        block[1].running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, 512, 8, 8, device="cuda", dtype=torch.half)
    weights = sum(p.nbytes for p in model.parameters())
    with torch.no_grad():
        expected = model(x)
        gc.collect()
        before = torch.cuda.memory_allocated()
        compiled = torch.compile(model, backend="tensorrt", options={"target": "reference"})
        got = compiled(x)
        torch.cuda.synchronize()
        gc.collect()
        added = torch.cuda.memory_allocated() - before - got.nbytes
    torch.testing.assert_close(got, expected, atol=5e-2, rtol=5e-2)
    assert added < weights / 4, f"compiling added {added / 2**20:.0f} MiB; the weights are {weights / 2**20:.0f} MiB"


class _AttentionWithAnAllTrueMask(torch.nn.Module):
    """transformers' attention compiled without a mask: an all-True mask, broadcast along every dim but the batch."""

    def forward(self, q, k, v):
        mask = torch.ones(q.shape[0], 1, 1, 1, dtype=torch.bool, device=q.device)
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask.expand(-1, 1, q.shape[2], k.shape[2]))


def test_compiling_attention_with_a_broadcast_mask_holds_no_score_matrix():
    """PyTorch's fused GPU attention refuses a mask broadcast along its last dim, and its math path holds the float32
    score matrix: tracing and building the engine stay below one half-precision score matrix (192 MiB here), and the
    engine leaves the all-True mask out (targets/reference/attention.py)."""
    q, k, v = [torch.randn(32, 12, 512, 64, device="cuda", dtype=torch.half) for _ in range(3)]
    scores = 32 * 12 * 512 * 512 * 2
    with torch.no_grad():
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        compiled = torch.compile(_AttentionWithAnAllTrueMask(), backend="tensorrt",
                                 options={"target": "reference", "min_block_size": 1})
        got = compiled(q, k, v)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - before
    torch.testing.assert_close(got, expected, atol=2e-3, rtol=2e-3)
    assert peak < scores, f"compiling held {peak / 2**20:.0f} MiB; a score matrix is {scores / 2**20:.0f} MiB"


class _Gram(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x @ x.transpose(0, 1)).sum(1)


def _eight_threads(batch_sizes):
    """Eight threads, half on their own stream and half on the legacy default one, each calling one engine 10 times
    with its own input: every result matches eager (calls share one context, CUDA graphs and their memory pool)."""
    spec = torch_trt.Input(min_shape=(1, 64), opt_shape=(8, 64), max_shape=(32, 64))
    compiled = torch_trt.compile(_Gram().eval(), inputs=[spec], target="reference", device="cuda:0",
                                 min_block_size=1)
    inputs = [torch.randn(b, 64, device="cuda") for b in batch_sizes]
    results = {}

    def work(index):
        stream = torch.cuda.Stream() if index % 2 else torch.cuda.default_stream()
        with torch.cuda.stream(stream), torch.no_grad():
            results[index] = [compiled(inputs[index]) for _ in range(10)]
        stream.synchronize()

    errors = run_in_threads(work, len(inputs))
    assert not errors, errors
    torch.cuda.synchronize()
    for index, x in enumerate(inputs):
        for got in results[index]:
            torch.testing.assert_close(got, _Gram()(x))


def test_eight_threads_on_cuda_with_different_batch_sizes():
    _eight_threads((1, 2, 3, 5, 8, 13, 21, 32))


def test_eight_threads_on_cuda_with_one_batch_size():
    _eight_threads((16,) * 8)
