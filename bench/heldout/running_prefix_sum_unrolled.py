#!/usr/bin/env python3
# coding: utf-8
"""
Block-wise running (prefix) sum along rows.

out[k] = x[0] + ... + x[k] for row-blocks of 16 rows; the block loop is unrolled to
batch several small blocks per submission.
"""
import os

import torch

import pypto

ROWS = 352     # 22 blocks, not a multiple of 4
COLS = 64
RB = 16
NB = ROWS // RB


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def block_prefix_sum_kernel(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(RB, COLS)
    acc = pypto.tensor([RB, COLS], pypto.DT_FP32, "acc")
    for i in pypto.loop(NB, name="PREFIX", idx_name="i", unroll_list=[1, 2, 4],
                        submit_before_loop=True):
        blk = pypto.view(x, [RB, COLS], [i * RB, 0])
        if i == 0:
            acc[:] = pypto.clone(blk)
        else:
            acc[:] = acc + blk
        pypto.assemble(pypto.clone(acc), [i * RB, 0], out)


def reference(x):
    blocks = x.reshape(NB, RB, COLS)
    return torch.cumsum(blocks, 0).reshape(ROWS, COLS)


def test_block_prefix_sum():
    device = "cpu"
    if os.environ.get("ASCEND_HOME_PATH"):
        device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
        torch.npu.set_device(device_id)
        device = f"npu:{device_id}"
    x = torch.randn(ROWS, COLS, dtype=torch.float32, device=device)
    out = torch.zeros(ROWS, COLS, dtype=torch.float32, device=device)
    block_prefix_sum_kernel(x, out)
    if device != "cpu":
        torch.testing.assert_close(out.cpu(), reference(x.cpu()), rtol=1e-4, atol=1e-4)
