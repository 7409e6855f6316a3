#!/usr/bin/env python3
# coding: utf-8
"""
Blocked transpose with a fused scale: out = (x * alpha)^T, in 32x32 tiles.
"""
import os

import torch

import pypto

R, C = 128, 96
T = 32


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def blocked_transpose_kernel(
    x: pypto.Tensor([R, C], pypto.DT_FP32),
    out: pypto.Tensor([C, R], pypto.DT_FP32),
    alpha: float = 1.0,
):
    pypto.set_vec_tile_shapes(T, T)
    for i in pypto.loop(R // T, name="ROW_TILES", idx_name="i"):
        for j in pypto.loop(C // T, name="COL_TILES", idx_name="i"):
            blk = pypto.view(x, [T, T], [i * T, j * T])
            blk_t = pypto.transpose(blk * alpha, 0, 1)
            print("tile", i, j, blk_t.shape)
            pypto.assemble(blk_t, [j * T, i * T], out)


def run(device):
    x = torch.randn(R, C, dtype=torch.float32, device=device)
    out = torch.zeros(C, R, dtype=torch.float32, device=device)
    blocked_transpose_kernel(x, out, 0.5)
    return x, out


def test_blocked_transpose():
    if os.environ.get("ASCEND_HOME_PATH"):
        device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
        torch.npu.set_device(device_id)
        x, out = run(f"npu:{device_id}")
        torch.testing.assert_close(out.cpu(), (x * 0.5).t().cpu())
    else:
        run("cpu")
