#!/usr/bin/env python3
# coding: utf-8
"""
Softplus over row blocks: softplus(x) = relu(x) + log(1 + exp(-|x|)).

log(1 + u) with u in (0, 1] is evaluated as a truncated alternating series so the
whole body stays in mul/add; the last row block also receives the output bias.
"""
import os

import pytest
import torch

import pypto

ROWS, COLS = 128, 128
RB = 32
N_BLK = ROWS // RB
SERIES_TERMS = 24


def log1p_series(u, terms):
    """Plain helper: sum_{n=1..terms} (-1)^(n+1) u^n / n, unrolled at trace time."""
    power = u * 1.0
    acc = u * 1.0
    for n in range(2, terms + 1):
        power = power * u
        coeff = (1.0 if n % 2 == 1 else -1.0) / n
        acc = acc + power * coeff
    return acc


def block_epilogue(y, blk, n_blk, bias):
    """Plain helper: only the final block carries the bias."""
    if blk == n_blk - 1:
        return y + bias
    return y


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def softplus_series_kernel(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    bias: pypto.Tensor([1, COLS], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(RB, COLS)
    for blk in pypto.loop(N_BLK, name="SP_BLK", idx_name="blk"):
        xb = pypto.view(x, [RB, COLS], [blk * RB, 0])
        u = pypto.exp(pypto.abs(xb) * -1.0)
        y = pypto.relu(xb) + log1p_series(u, SERIES_TERMS)
        y = block_epilogue(y, blk, N_BLK, bias)
        out[blk * RB:(blk + 1) * RB, :] = y


@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_softplus_series(scale):
    x = torch.randn(ROWS, COLS) * scale
    bias = torch.randn(1, COLS)
    out = torch.zeros(ROWS, COLS)
    softplus_series_kernel(x, bias, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        ref = torch.nn.functional.softplus(x)
        ref[-RB:] += bias
        torch.testing.assert_close(out, ref, rtol=1e-3, atol=1e-3)
