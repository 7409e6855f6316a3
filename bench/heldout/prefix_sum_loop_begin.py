#!/usr/bin/env python3
# coding: utf-8
"""
Block-wise running sum along rows with an unrolled block loop.  The first-iteration
branch is written with pypto.is_loop_begin so unrolling does not multiply the paths.
"""
import os

import torch

import pypto

ROWS = 352
COLS = 64
RB = 16
NB = ROWS // RB


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def running_sum_kernel(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(RB, COLS)
    acc = pypto.tensor([RB, COLS], pypto.DT_FP32, "acc")
    for i in pypto.loop(NB, name="RUNSUM", idx_name="i", unroll_list=[1, 2, 4],
                        submit_before_loop=True):
        blk = pypto.view(x, [RB, COLS], [i * RB, 0])
        if pypto.is_loop_begin(i):
            acc[:] = pypto.clone(blk)
        else:
            acc[:] = acc + blk
        pypto.assemble(pypto.clone(acc), [i * RB, 0], out)


def test_running_sum():
    device = "cpu"
    if os.environ.get("ASCEND_HOME_PATH"):
        device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
        torch.npu.set_device(device_id)
        device = f"npu:{device_id}"
    x = torch.randn(ROWS, COLS, device=device)
    out = torch.zeros(ROWS, COLS, device=device)
    running_sum_kernel(x, out)
    if device != "cpu":
        ref = torch.cumsum(x.cpu().reshape(NB, RB, COLS), 0).reshape(ROWS, COLS)
        torch.testing.assert_close(out.cpu(), ref, rtol=1e-4, atol=1e-4)
