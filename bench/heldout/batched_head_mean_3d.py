#!/usr/bin/env python3
# coding: utf-8
"""
Per-head mean pooling on [B, S, H] with a bias, then a 2-D epilogue.

The 3-D part uses a 3-D TileShape; after the keepdim=False reduction the result is 2-D,
so the TileShape is reset to two dims before the epilogue.
"""
import os

import pytest
import torch

import pypto

B, S, H = 4, 64, 128


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def head_mean_kernel(
    x: pypto.Tensor([B, S, H], pypto.DT_FP32),
    bias: pypto.Tensor([B, S, H], pypto.DT_FP32),
    pooled: pypto.Tensor([B, H], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, S, 64)
    biased = x + bias
    summed = pypto.sum(biased, 1, keepdim=False)
    pypto.set_vec_tile_shapes(B, 64)
    pooled[:] = summed * (1.0 / S)


@pytest.mark.parametrize("seed", [0, 5])
def test_head_mean(seed):
    torch.manual_seed(seed)
    x = torch.randn(B, S, H)
    bias = torch.randn(B, S, H)
    pooled = torch.zeros(B, H)
    head_mean_kernel(x, bias, pooled)
    if os.environ.get("ASCEND_HOME_PATH"):
        torch.testing.assert_close(pooled, (x + bias).mean(1), rtol=1e-4, atol=1e-4)
