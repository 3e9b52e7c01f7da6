import pytest
import torch

import torch_trt.targets.reference as trt

F32, F16, I32 = trt.float32, trt.float16, trt.int32

# (equation, input shapes, dtype); torch.einsum on the same equation is the expected result
CASES = {
    "transpose": ("ij->ji", [(2, 3)], torch.float32),
    "sum_all": ("ij->", [(2, 3)], torch.float32),
    "row_sums": ("ij->i", [(2, 3)], torch.float32),
    "implicit_transpose": ("ji", [(2, 3)], torch.float32),
    "matmul": ("ik,kj->ij", [(2, 3), (3, 4)], torch.float32),
    "implicit_matmul": ("ij,jk", [(2, 3), (3, 4)], torch.float32),
    "batch_matmul": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], torch.float32),
    "attention_scores": ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)], torch.float32),
    "dot": ("i,i->", [(4,), (4,)], torch.float32),
    "outer": ("i,j->ij", [(3,), (4,)], torch.float32),
    "spaces": ("b i j , b j k -> b k i", [(2, 3, 4), (2, 4, 5)], torch.float32),
    "scalar_operand": (",ij->ij", [(), (2, 3)], torch.float32),
    "fp16": ("bij,bjk->bik", [(2, 3, 8), (2, 8, 5)], torch.float16),
    "bf16": ("ij->ji", [(2, 3)], torch.bfloat16),
}


@pytest.mark.parametrize("equation, shapes, dtype", CASES.values(), ids=CASES.keys())
def test_matches_torch_einsum(run_network, equation, shapes, dtype):
    tensors = [torch.randn(shape).to(dtype) for shape in shapes]
    out = run_network(lambda net, *inputs: net.add_einsum(list(inputs), equation).get_output(0), tensors)
    assert out.dtype == dtype
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(out, torch.einsum(equation, *tensors), atol=tolerance, rtol=tolerance)


def test_equation_reads_back_and_can_be_changed(run_network):
    a = torch.randn(2, 3)

    def define(net, x):
        layer = net.add_einsum([x], "ij->ij")
        assert (layer.type, layer.equation, layer.num_inputs) == (trt.LayerType.EINSUM, "ij->ij", 1)
        layer.equation = "ij->ji"
        return layer.get_output(0)

    torch.testing.assert_close(run_network(define, [a]), a.T)


def test_equation_changed_to_an_invalid_one_fails_the_build(refused_at_build):
    def define(net, x):
        layer = net.add_einsum([x], "ij->ji")
        layer.equation = "ii->i"
        return layer

    assert "diagonal" in refused_at_build(define, [((3, 3), F32)])


REFUSED = {  # (equation, [(shape, dtype) per input], message)
    "ellipsis": ("...ij->...ji", [((2, 3, 4), F32)], "does not support ellipsis"),
    "uppercase": ("IJ->JI", [((2, 3), F32)], "ASCII lowercase"),
    "diagonal": ("ii->i", [((3, 3), F32)], "does not support diagonal"),
    "three_inputs": ("ij,jk,kl->il", [((2, 3), F32), ((3, 4), F32), ((4, 5), F32)], "one or two inputs, got 3"),
    "int32": ("ij->ji", [((2, 3), I32)], "needs FLOAT, HALF or BF16 inputs"),
    "mixed_dtypes": ("ij,jk->ik", [((2, 3), F32), ((3, 4), F16)], "same dtype"),
    "term_count": ("ij->ji", [((2, 3), F32), ((2, 3), F32)], "1 input terms for 2 inputs"),
    "term_rank": ("ijk->k", [((2, 3), F32)], "labels 3 dims but its input has shape (2, 3)"),
    "broadcast_label": ("ij,ij->ij", [((1, 3), F32), ((2, 3), F32)], "label 'i' has sizes 1 and 2"),
    "unknown_output_label": ("ij->k", [((2, 3), F32)], "must appear in an input"),
    "repeated_output_label": ("ij->ii", [((2, 3), F32)], "only once in the output"),
}


@pytest.mark.parametrize("equation, specs, message", REFUSED.values(), ids=REFUSED.keys())
def test_refused(refused, equation, specs, message):
    assert message in refused(lambda net, *inputs: net.add_einsum(list(inputs), equation), specs)
