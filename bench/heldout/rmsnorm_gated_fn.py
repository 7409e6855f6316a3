#!/usr/bin/env python3
# coding: utf-8
"""
Gated RMSNorm (as used by linear-attention blocks): out = rmsnorm(x) * gamma * silu(z).

The norm lives in an inlined frontend.function helper that writes its out parameter.
"""
import os

import pytest
import torch

import pypto

ROWS = 64
HIDDEN = 128
EPS = 1e-6


@pypto.frontend.function
def gated_rms_norm(x, z, gamma, out):
    sq = x * x
    mean_sq = pypto.sum(sq, -1, keepdim=True) * (1.0 / HIDDEN)
    inv_rms = pypto.rsqrt(mean_sq + EPS)
    normed = x * inv_rms
    normed = normed * gamma
    gate = z * pypto.sigmoid(z)
    out[:] = normed * gate


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def gated_rms_norm_kernel(
    x: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
    z: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
    gamma: pypto.Tensor([1, HIDDEN], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, HIDDEN)
    gated_rms_norm(x, z, gamma, out)


def golden(x, z, gamma):
    inv = torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS)
    return x * inv * gamma * (z * torch.sigmoid(z))


@pytest.mark.parametrize("seed", [1, 2])
def test_gated_rms_norm(seed):
    torch.manual_seed(seed)
    x = torch.randn(ROWS, HIDDEN)
    z = torch.randn(ROWS, HIDDEN)
    gamma = torch.rand(1, HIDDEN)
    out = torch.zeros(ROWS, HIDDEN)
    gated_rms_norm_kernel(x, z, gamma, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        torch.testing.assert_close(out, golden(x, z, gamma), atol=1e-3, rtol=1e-3)
