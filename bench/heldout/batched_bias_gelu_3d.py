#!/usr/bin/env python3
# coding: utf-8
"""
Batched bias-add followed by a sigmoid-approximated GELU on [B, S, H] activations.
"""
import os

import pytest
import torch

import pypto

B, S, H = 4, 128, 64


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def bias_gelu_3d_kernel(
    x: pypto.Tensor([B, S, H], pypto.DT_FP32),
    bias: pypto.Tensor([B, S, H], pypto.DT_FP32),
    out: pypto.Tensor([B, S, H], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, H)
    biased = x + bias
    # gelu(x) ~= x * sigmoid(1.702 x)
    gate = pypto.sigmoid(biased * 1.702)
    out[:] = biased * gate


def bias_gelu_golden(x, bias):
    y = x + bias
    return y * torch.sigmoid(1.702 * y)


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_bias_gelu_3d(scale):
    x = torch.randn(B, S, H, dtype=torch.float32) * scale
    bias = torch.randn(B, S, H, dtype=torch.float32)
    out = torch.empty(B, S, H, dtype=torch.float32)
    bias_gelu_3d_kernel(x, bias, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        torch.testing.assert_close(out, bias_gelu_golden(x, bias), atol=1e-3, rtol=1e-3)
