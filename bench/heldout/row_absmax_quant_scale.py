#!/usr/bin/env python3
# coding: utf-8
"""
Per-row symmetric int8 quantisation scales for activations of width 96.

scale[r] = max(|x[r, :]|) / 127, and the rescaled activations x / scale.
"""
import os

import pytest
import torch

import pypto

ROWS = 64
WIDTH = 96
TILE_R, TILE_C = 16, 12     # 96 = 8 column tiles of 12


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def row_absmax_scale_kernel(
    x: pypto.Tensor([ROWS, WIDTH], pypto.DT_FP32),
    scale: pypto.Tensor([ROWS, 1], pypto.DT_FP32),
    x_scaled: pypto.Tensor([ROWS, WIDTH], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TILE_R, TILE_C)
    x_abs = pypto.abs(x)
    row_max = pypto.amax(x_abs, -1, keepdim=True)
    row_scale = pypto.maximum(row_max * (1.0 / 127.0), 1e-8)
    scale[:] = row_scale
    x_scaled[:] = x / row_scale


def reference(x):
    s = torch.clamp(x.abs().amax(-1, keepdim=True) / 127.0, min=1e-8)
    return s, x / s


@pytest.mark.parametrize("magnitude", [1.0, 30.0])
def test_row_absmax_scale(magnitude):
    x = torch.randn(ROWS, WIDTH, dtype=torch.float32) * magnitude
    scale = torch.zeros(ROWS, 1, dtype=torch.float32)
    x_scaled = torch.zeros(ROWS, WIDTH, dtype=torch.float32)
    row_absmax_scale_kernel(x, scale, x_scaled)
    if os.environ.get("ASCEND_HOME_PATH"):
        s_ref, xs_ref = reference(x)
        torch.testing.assert_close(scale, s_ref, rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(x_scaled, xs_ref, rtol=1e-3, atol=1e-3)
