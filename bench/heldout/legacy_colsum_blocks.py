#!/usr/bin/env python3
# coding: utf-8
"""
Column sums of a tall matrix, reduced block by block (legacy pypto.function flow).

The first block initialises the accumulator, later blocks add into it.
"""
import os

from numpy.testing import assert_allclose
import torch

import pypto

ROWS, COLS = 256, 128
BLK = 64
N_BLK = ROWS // BLK


def record_colsum(x, acc):
    with pypto.function("COLSUM_BLOCKS", x, acc):
        pypto.set_vec_tile_shapes(BLK, 64)
        for k in pypto.loop(N_BLK, name="ROW_BLK", idx_name="k"):
            part = pypto.view(x, [BLK, COLS], [k * BLK, 0])
            part_sum = pypto.sum(part, 0, keepdim=True)
            if k == 0:
                acc.move(pypto.clone(part_sum))
            else:
                acc.move(acc + part_sum)


def test_colsum_blocks():
    if "TILE_FWK_DEVICE_ID" in os.environ:
        torch.npu.set_device(int(os.environ["TILE_FWK_DEVICE_ID"]))
    pypto.runtime._device_init()

    x = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "x")
    acc = pypto.tensor([1, COLS], pypto.DT_FP32, "acc")
    record_colsum(x, acc)

    x_host = torch.randn(ROWS, COLS, dtype=torch.float32)
    acc_host = torch.zeros(1, COLS, dtype=torch.float32)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x_host, "x_host"), pypto.from_torch(acc_host, "acc_host")
    )
    assert_allclose(acc_host.numpy(), x_host.sum(0, keepdim=True).numpy(), rtol=1e-4, atol=1e-3)
    pypto.runtime._device_fini()
