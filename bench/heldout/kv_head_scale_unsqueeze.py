#!/usr/bin/env python3
# coding: utf-8
"""
Scale K rows per head and lay them out as [heads, rows, dim] for the attention kernel.

Rows are processed in blocks of ROWS_PER_HEAD; each block is one head.
"""
import os
import sys

import torch

import pypto

HEADS = 8
ROWS_PER_HEAD = 32
DIM = 128
TOTAL_ROWS = HEADS * ROWS_PER_HEAD


def scale_one_head(k_blk, inv_scale):
    """Plain helper: normalises one block of K and adds the head axis."""
    centred = k_blk - pypto.amax(k_blk, -1, keepdim=True)
    head = pypto.unsqueeze(centred, 0) * inv_scale
    return head


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def kv_head_scale_kernel(
    k: pypto.Tensor([TOTAL_ROWS, DIM], pypto.DT_FP16),
    out: pypto.Tensor([HEADS, ROWS_PER_HEAD, DIM], pypto.DT_FP16),
    inv_scale: float = 0.0883883,
):
    pypto.set_vec_tile_shapes(16, DIM)
    for h in pypto.loop(HEADS, name="HEAD_LOOP", idx_name="h"):
        k_blk = pypto.view(k, [ROWS_PER_HEAD, DIM], [h * ROWS_PER_HEAD, 0])
        head = scale_one_head(k_blk, inv_scale)
        pypto.assemble(head, [h, 0, 0], out)


def main():
    device = "cpu"
    if len(sys.argv) > 1 and sys.argv[1] == "npu":
        device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
        torch.npu.set_device(device_id)
        device = f"npu:{device_id}"
    k = torch.randn(TOTAL_ROWS, DIM, dtype=torch.float16, device=device)
    out = torch.zeros(HEADS, ROWS_PER_HEAD, DIM, dtype=torch.float16, device=device)
    kv_head_scale_kernel(k, out, 0.0883883)
    print("kv_head_scale done:", tuple(out.shape))


if __name__ == "__main__":
    main()
