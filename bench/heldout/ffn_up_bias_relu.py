#!/usr/bin/env python3
# coding: utf-8
"""
FFN up-projection with bias and ReLU, processed in token blocks.
"""
import os

import numpy as np
import torch

import pypto

TOKENS = 256
D_MODEL = 128
D_FF = 256
TOK_BLK = 64


def up_proj_block(x_blk, w_up, bias):
    """x_blk: [TOK_BLK, D_MODEL] fp16 -> relu(x_blk @ w_up + bias) in fp32."""
    h = pypto.matmul(x_blk, w_up, pypto.DT_FP32)
    h = h + bias
    return pypto.relu(h)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def ffn_up_kernel(
    x: pypto.Tensor([TOKENS, D_MODEL], pypto.DT_FP16),
    w_up: pypto.Tensor([D_MODEL, D_FF], pypto.DT_FP16),
    bias: pypto.Tensor([1, D_FF], pypto.DT_FP32),
    out: pypto.Tensor([TOKENS, D_FF], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, 128)
    for t in pypto.loop(TOKENS // TOK_BLK, name="TOK_LOOP", idx_name="t"):
        x_blk = x[t * TOK_BLK:(t + 1) * TOK_BLK, :]
        y_blk = up_proj_block(x_blk, w_up, bias)
        out[t * TOK_BLK:(t + 1) * TOK_BLK, :] = y_blk


def test_ffn_up_bias_relu():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    npu = os.environ.get("ASCEND_HOME_PATH") is not None
    if npu:
        torch.npu.set_device(device_id)
    dev = f"npu:{device_id}" if npu else "cpu"
    x = torch.randn(TOKENS, D_MODEL, dtype=torch.float16, device=dev)
    w_up = torch.randn(D_MODEL, D_FF, dtype=torch.float16, device=dev) * 0.05
    bias = torch.randn(1, D_FF, dtype=torch.float32, device=dev)
    out = torch.zeros(TOKENS, D_FF, dtype=torch.float32, device=dev)
    ffn_up_kernel(x, w_up, bias, out)
    if npu:
        ref = torch.relu(x.float() @ w_up.float() + bias)
        np.testing.assert_allclose(out.cpu().numpy(), ref.cpu().numpy(), rtol=1e-2, atol=1e-2)
