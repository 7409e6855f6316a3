#!/usr/bin/env python3
# coding: utf-8
"""
Per-(batch, head) running max over sequence blocks, legacy pypto.function flow.

x: [B, H*S, D]; for every batch b and head h the S rows are visited in blocks of SB
and the block maxima are written to out[b, h*NSB + s, :].
"""
import os

import torch

import pypto

B, H, S, D = 2, 4, 64, 64
SB = 16
NSB = S // SB


def block_max_graph(x, out):
    for b_idx in pypto.loop(B, name="BATCH", idx_name="b_idx"):
        for h_idx in pypto.loop(H, name="HEAD", idx_name="h_idx", unroll_list=[1, 2, 4]):
            for s_idx in pypto.loop(NSB, name="SEQ_BLK", idx_name="b_idx"):
                row0 = h_idx * S + s_idx * SB
                blk = pypto.view(x, [1, SB, D], [b_idx, row0, 0])
                blk_max = pypto.amax(blk, 1, keepdim=True)
                pypto.assemble(blk_max, [b_idx, h_idx * NSB + s_idx, 0], out)


def test_block_max_legacy():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    pypto.runtime._device_init()

    x = pypto.tensor([B, H * S, D], pypto.DT_FP32, "x")
    out = pypto.tensor([B, H * NSB, D], pypto.DT_FP32, "out")
    with pypto.function("BLOCK_MAX", x, out):
        pypto.set_vec_tile_shapes(1, SB, D)
        block_max_graph(x, out)

    x_host = torch.randn(B, H * S, D, dtype=torch.float32)
    out_host = torch.zeros(B, H * NSB, D, dtype=torch.float32)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x_host, "x_host"), pypto.from_torch(out_host, "out_host"))
    ref = x_host.reshape(B, H * NSB, SB, D).amax(2)
    torch.testing.assert_close(out_host, ref)
    pypto.runtime._device_fini()
