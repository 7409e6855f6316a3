#!/usr/bin/env python3
# coding: utf-8
"""
LayerNorm split into a statistics stage and an apply stage.

Each stage is wrapped in its own single-iteration loop so the two sub-graphs show up
as separate functions in the compile output.
"""
import os

import pytest
import torch

import pypto

ROWS, HID = 64, 256
EPS = 1e-5


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def layernorm_kernel(
    x: pypto.Tensor([ROWS, HID], pypto.DT_FP32),
    gamma: pypto.Tensor([1, HID], pypto.DT_FP32),
    beta: pypto.Tensor([1, HID], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, HID], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, HID)
    mean = pypto.tensor([ROWS, 1], pypto.DT_FP32, "mean")
    rstd = pypto.tensor([ROWS, 1], pypto.DT_FP32, "rstd")
    for _ in pypto.loop(1, name="LN_STATS", idx_name="st"):
        mu = pypto.sum(x, -1, keepdim=True) * (1.0 / HID)
        centred = x - mu
        var = pypto.sum(centred * centred, -1, keepdim=True) * (1.0 / HID)
        mean[:] = mu
        rstd[:] = pypto.rsqrt(var + EPS)
    for _ in pypto.loop(1, name="LN_APPLY", idx_name="ap"):
        normed = (x - mean) * rstd
        out[:] = normed * gamma + beta


@pytest.mark.parametrize("shift", [0.0, 3.0])
def test_layernorm(shift):
    x = torch.randn(ROWS, HID) + shift
    gamma = torch.rand(1, HID)
    beta = torch.randn(1, HID)
    out = torch.zeros(ROWS, HID)
    layernorm_kernel(x, gamma, beta, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        ref = torch.nn.functional.layer_norm(x, (HID,), gamma[0], beta[0], EPS)
        torch.testing.assert_close(out, ref, rtol=1e-3, atol=1e-3)
