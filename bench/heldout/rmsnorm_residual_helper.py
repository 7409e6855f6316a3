#!/usr/bin/env python3
# coding: utf-8
"""
Residual add + RMSNorm for a decoder block.

The normalisation is factored into an inlined frontend.function helper so the
same body can be reused by the pre- and post-attention kernels.
"""
import os

import pytest
import torch

import pypto

ROWS = 64
HIDDEN = 256
EPS = 1e-6


@pypto.frontend.function
def residual_rms_norm(x, residual, gamma, out):
    hidden = x + residual
    sq = hidden * hidden
    mean_sq = pypto.sum(sq, -1, keepdim=True) * (1.0 / HIDDEN)
    inv_rms = pypto.rsqrt(mean_sq + EPS)
    normed = hidden * inv_rms
    out = normed * gamma


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def rms_norm_residual_kernel(
    x: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
    residual: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
    gamma: pypto.Tensor([1, HIDDEN], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
):
    # 16 rows x 256 fp32 = 16 KiB per tile, last dim 1024 B
    pypto.set_vec_tile_shapes(16, HIDDEN)
    residual_rms_norm(x, residual, gamma, out)


def golden(x, residual, gamma):
    h = x + residual
    inv = torch.rsqrt((h * h).mean(-1, keepdim=True) + EPS)
    return h * inv * gamma


@pytest.mark.parametrize("seed", [0, 7])
def test_rms_norm_residual(seed):
    torch.manual_seed(seed)
    x = torch.randn(ROWS, HIDDEN, dtype=torch.float32)
    residual = torch.randn(ROWS, HIDDEN, dtype=torch.float32)
    gamma = torch.rand(1, HIDDEN, dtype=torch.float32)
    out = torch.zeros(ROWS, HIDDEN, dtype=torch.float32)
    rms_norm_residual_kernel(x, residual, gamma, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        torch.testing.assert_close(out, golden(x, residual, gamma), atol=1e-3, rtol=1e-3)
