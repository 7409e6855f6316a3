#!/usr/bin/env python3
# coding: utf-8
"""
Legacy-flow clamp-and-scale with a runtime branch on the block index.  The device is
selected on every path before the graph is launched.
"""
import os

import torch

import pypto

ROWS, COLS = 128, 64
RB = 32
NB = ROWS // RB


def pick_device():
    if "TILE_FWK_DEVICE_ID" in os.environ:
        device_id = int(os.environ["TILE_FWK_DEVICE_ID"])
    else:
        device_id = 0
    return device_id


def record_clamp_scale(x, y):
    with pypto.function("CLAMP_SCALE", x, y):
        pypto.set_vec_tile_shapes(RB, COLS)
        for r in pypto.loop(NB, name="RBLK", idx_name="r"):
            blk = pypto.view(x, [RB, COLS], [r * RB, 0])
            if pypto.cond(r == NB - 1):
                pypto.assemble(pypto.clip(blk, -1.0, 1.0), [r * RB, 0], y)
            else:
                pypto.assemble(pypto.clip(blk, -4.0, 4.0) * 0.25, [r * RB, 0], y)


def test_clamp_scale_legacy():
    if os.environ.get("PYPTO_FORCE_DEVICE0"):
        torch.npu.set_device(0)
    else:
        torch.npu.set_device(pick_device())
    pypto.runtime._device_init()
    x = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "x")
    y = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "y")
    record_clamp_scale(x, y)

    x_host = torch.randn(ROWS, COLS) * 3
    y_host = torch.zeros(ROWS, COLS)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x_host, "x_host"), pypto.from_torch(y_host, "y_host"))
    ref = torch.clamp(x_host, -4, 4) * 0.25
    ref[-RB:] = torch.clamp(x_host[-RB:], -1, 1)
    torch.testing.assert_close(y_host, ref)
    pypto.runtime._device_fini()
