#!/usr/bin/env python3
# coding: utf-8
"""
Attention scores with an exp epilogue: P = exp(Q @ K^T * scale - m).

The cube tiles are configured for the matmul; the epilogue runs on the vector unit.
"""
import os

import torch

import pypto

M, K, N = 64, 128, 64
SOFTMAX_SCALE = 0.088


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def scores_exp_kernel(
    q: pypto.Tensor([M, K], pypto.DT_FP16),
    k: pypto.Tensor([N, K], pypto.DT_FP16),
    row_max: pypto.Tensor([M, 1], pypto.DT_FP32),
    probs: pypto.Tensor([M, N], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([32, 32], [64, 128], [32, 64])
    scores = pypto.matmul(q, k, pypto.DT_FP32, b_trans=True)
    logits = scores * SOFTMAX_SCALE
    probs[:] = pypto.exp(logits - row_max)


def golden(q, k, row_max):
    s = (q.float() @ k.float().t()) * SOFTMAX_SCALE
    return torch.exp(s - row_max)


def test_scores_exp():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    on_npu = bool(os.environ.get("ASCEND_HOME_PATH"))
    if on_npu:
        torch.npu.set_device(device_id)
    dev = f"npu:{device_id}" if on_npu else "cpu"
    q = torch.randn(M, K, dtype=torch.float16, device=dev)
    k = torch.randn(N, K, dtype=torch.float16, device=dev)
    row_max = torch.full((M, 1), 4.0, dtype=torch.float32, device=dev)
    probs = torch.zeros(M, N, dtype=torch.float32, device=dev)
    scores_exp_kernel(q, k, row_max, probs)
    if on_npu:
        torch.testing.assert_close(probs.cpu(), golden(q, k, row_max).cpu(), rtol=1e-2, atol=1e-2)
