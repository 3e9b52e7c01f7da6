"""Weights(type, ptr, count): host memory read at construction, any DataType (BF16 included)."""

import pytest
import torch

import torch_trt.targets.reference as trt


@pytest.mark.parametrize("dtype,datatype", [(torch.bfloat16, trt.DataType.BF16), (torch.float32, trt.DataType.FLOAT),
                                            (torch.int32, trt.DataType.INT32), (torch.float16, trt.DataType.HALF)])
def test_weights_from_an_address_hold_a_copy_of_the_values(dtype, datatype):
    values = torch.arange(6).to(dtype)
    weights = trt.Weights(datatype, values.data_ptr(), values.numel())
    values.zero_()  # a copy: later writes to the caller's memory do not reach the weights
    assert weights.dtype == datatype and weights.size == 6 and weights.nbytes == 6 * values.element_size()
    assert torch.equal(weights._as_torch(), torch.arange(6).to(dtype))


def test_bf16_weights_have_no_numpy_view():
    values = torch.ones(2, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="numpy has no BF16"):
        trt.Weights(trt.DataType.BF16, values.data_ptr(), 2).numpy()
