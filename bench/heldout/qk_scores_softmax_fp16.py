#!/usr/bin/env python3
# coding: utf-8
"""
Single-head attention probabilities P = softmax(Q K^T * scale) with fp16 inputs.

Cube tiles are set for the matmul and vector tiles for the fp32 softmax epilogue; a
separate fp16 pass uses a 16-element (32-byte) last tile dim.
"""
import os

import torch

import pypto

M, K, N = 64, 128, 128
SCALE = 0.0883883


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def qk_softmax_kernel(
    q: pypto.Tensor([M, K], pypto.DT_FP16),
    k: pypto.Tensor([N, K], pypto.DT_FP16),
    probs: pypto.Tensor([M, N], pypto.DT_FP32),
    q_scaled: pypto.Tensor([M, K], pypto.DT_FP16),
):
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 128])
    scores = pypto.matmul(q, k, pypto.DT_FP32, b_trans=True)
    pypto.set_vec_tile_shapes(16, 24 * 4)
    logits = scores * SCALE
    row_max = pypto.amax(logits, -1, keepdim=True)
    e = pypto.exp(logits - row_max)
    probs[:] = e / pypto.sum(e, -1, keepdim=True)
    pypto.set_vec_tile_shapes(32, 16)
    q_scaled[:] = q * SCALE


def test_qk_softmax():
    on_npu = bool(os.environ.get("ASCEND_HOME_PATH"))
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    if on_npu:
        torch.npu.set_device(device_id)
    dev = f"npu:{device_id}" if on_npu else "cpu"
    q = torch.randn(M, K, dtype=torch.float16, device=dev)
    k = torch.randn(N, K, dtype=torch.float16, device=dev)
    probs = torch.zeros(M, N, dtype=torch.float32, device=dev)
    q_scaled = torch.zeros(M, K, dtype=torch.float16, device=dev)
    qk_softmax_kernel(q, k, probs, q_scaled)
    if on_npu:
        ref = torch.softmax((q.float() @ k.float().t()) * SCALE, -1)
        torch.testing.assert_close(probs.cpu(), ref.cpu(), rtol=1e-2, atol=1e-3)
