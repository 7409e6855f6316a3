#!/usr/bin/env python3
# coding: utf-8
"""
Mean-pool a wide activation over its K column blocks with an explicitly initialised
local accumulator.
"""
import os

import pytest
import torch

import pypto

ROWS = 32
BLK = 64
N_BLK = 8
WIDE = BLK * N_BLK


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def kblock_mean_kernel(
    x: pypto.Tensor([ROWS, WIDE], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, BLK], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(ROWS, BLK)
    print("kblock_mean: tracing with", N_BLK, "column blocks")
    acc = pypto.tensor([ROWS, BLK], pypto.DT_FP32, "acc")
    acc[:] = pypto.full([ROWS, BLK], 0.0, pypto.DT_FP32)
    for kb in pypto.loop(N_BLK, name="KBLK", idx_name="kb", submit_before_loop=True):
        part = pypto.view(x, [ROWS, BLK], [0, kb * BLK])
        acc[:] = acc + part
    out[:] = acc * (1.0 / N_BLK)


@pytest.mark.parametrize("seed", [0, 9])
def test_kblock_mean(seed):
    torch.manual_seed(seed)
    x = torch.randn(ROWS, WIDE)
    out = torch.zeros(ROWS, BLK)
    kblock_mean_kernel(x, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        ref = x.reshape(ROWS, N_BLK, BLK).mean(1)
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
