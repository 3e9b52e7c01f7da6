"""Engines deserialized under `lending(tensors)` read a lent tensor in place of a weight with the same dtype and bytes
(lending.py), and copy every other weight."""

import logging

import numpy as np
import pytest
import torch

import torch_trt.targets.reference as trt
from torch_trt.targets.reference.lending import device_weights, lending

from .conftest import host_engine

WEIGHT = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 7


def _reads_in_place(placed, tensor):
    return placed.data_ptr() == tensor.data_ptr()


def test_a_lent_tensor_with_the_weights_bytes_is_read_in_place_viewed_with_the_weights_shape():
    plan_weight = WEIGHT.reshape(-1).clone()  # plans hold weights flat
    same_start = WEIGHT.clone()
    same_start[-1, -1] = -1.0  # its first bytes are the weight's: it is compared whole, and refused
    with lending([same_start, WEIGHT]):
        placed = device_weights({"w": plan_weight}, torch.device("cpu"))["w"]
    assert _reads_in_place(placed, WEIGHT)
    assert placed.shape == plan_weight.shape and torch.equal(placed, plan_weight)


@pytest.mark.parametrize("lent", [
    WEIGHT.double(),  # another dtype
    WEIGHT[:, :5].contiguous(),  # another size
    torch.cat([WEIGHT.reshape(-1)[:-1], torch.tensor([9.0])]).reshape(4, 6),  # the last byte differs, past the probe
    torch.where(WEIGHT == 0, torch.tensor(-0.0), WEIGHT),  # -0.0 equals 0.0, but its bytes differ
    WEIGHT.T,  # not contiguous
    WEIGHT.to_sparse(),  # not strided
    torch.quantize_per_tensor(WEIGHT, 0.1, 0, torch.qint8),  # quantized
], ids=["dtype", "size", "last-element", "negative-zero", "transposed", "sparse", "quantized"])
def test_a_tensor_that_is_not_the_weight_byte_for_byte_is_not_read(lent):
    plan_weight = WEIGHT.reshape(-1).clone()
    with lending([lent]):
        placed = device_weights({"w": plan_weight}, torch.device("cpu"))["w"]
    assert _reads_in_place(placed, plan_weight)  # a CPU engine's own copy: the plan's memory


def test_the_engine_load_reports_how_much_it_reads_in_place(caplog):
    other = torch.ones(6)
    with lending([WEIGHT]), caplog.at_level(logging.INFO, logger="torch_trt"):
        device_weights({"w": WEIGHT.reshape(-1).clone(), "other": other}, torch.device("cpu"))
    assert "1 of its 2 weights (0.0 of 0.0 MiB) are lent tensors, read in place" in caplog.text


def test_nothing_is_lent_outside_the_context():
    plan_weight = WEIGHT.reshape(-1).clone()
    with lending([WEIGHT]):
        pass
    assert not _reads_in_place(device_weights({"w": plan_weight}, torch.device("cpu"))["w"], WEIGHT)


def _times_constant(network, x):
    constant = network.add_constant((4, 6), trt.Weights(np.ascontiguousarray(WEIGHT.numpy()))).get_output(0)
    return network.add_elementwise(x, constant, trt.ElementWiseOperation.PROD).get_output(0)


def test_an_engine_loaded_under_lending_runs_on_the_lent_tensor():
    lent = WEIGHT.clone()
    with lending([lent]):
        engine = host_engine(_times_constant, shape=(4, 6))[1]
    (held,) = engine._module.parameters()
    assert held.untyped_storage().data_ptr() == lent.untyped_storage().data_ptr()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: device engines copy their weights there")
def test_a_cuda_weight_equal_to_a_lent_cuda_tensor_is_not_copied():
    lent = WEIGHT.cuda()
    before = torch.cuda.memory_allocated()
    with lending([lent]):
        placed = device_weights({"w": WEIGHT.reshape(-1).clone()}, torch.device("cuda"))["w"]
    assert _reads_in_place(placed, lent) and torch.cuda.memory_allocated() == before
