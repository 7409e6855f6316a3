#!/usr/bin/env python3
# coding: utf-8
"""
Sum K column-blocks of a wide activation into one [ROWS, BLK] partial, then scale.

Used as the reduction stage of a split-hidden pooling layer.
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
def kblock_pool_kernel(
    x: pypto.Tensor([ROWS, WIDE], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, BLK], pypto.DT_FP32),
    scale: float = 0.125,
):
    pypto.set_vec_tile_shapes(ROWS, BLK)
    acc = pypto.tensor([ROWS, BLK], pypto.DT_FP32, "acc")
    for kb in pypto.loop(N_BLK, name="KBLK", idx_name="kb", submit_before_loop=True):
        part = pypto.view(x, [ROWS, BLK], [0, kb * BLK])
        acc[:] = acc + part
    out[:] = acc * scale


def golden(x, scale):
    return x.reshape(ROWS, N_BLK, BLK).sum(1) * scale


@pytest.mark.parametrize("scale", [0.125, 1.0])
def test_kblock_pool(scale):
    x = torch.randn(ROWS, WIDE, dtype=torch.float32)
    out = torch.zeros(ROWS, BLK, dtype=torch.float32)
    kblock_pool_kernel(x, out, scale)
    if os.environ.get("ASCEND_HOME_PATH"):
        torch.testing.assert_close(out, golden(x, scale), rtol=1e-4, atol=1e-4)
