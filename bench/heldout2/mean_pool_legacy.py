"""Sentence-embedding mean pooling: per-block column sums recorded with pypto.function.

The token count is not a multiple of the block, so the last block carries a valid shape.
"""

import os

import torch

import pypto

ROWS, HID, BLK = 200, 256, 64
N_BLK = (ROWS + BLK - 1) // BLK


def record_partial_sums(rows, hid, blk):
    n_full = rows // blk
    tail = rows - n_full * blk
    hs = pypto.tensor([rows, hid], pypto.DT_FP32, "hidden_states")
    part = pypto.tensor([N_BLK, hid], pypto.DT_FP32, "part_sums")
    with pypto.function("MEAN_POOL_PARTIAL", hs, part):
        for t in pypto.loop(N_BLK, name="pool_blk", idx_name="t"):
            pypto.set_vec_tile_shapes(blk, hid)
            if pypto.cond(t < n_full):
                xb = pypto.view(hs, [blk, hid], [t * blk, 0])
                pypto.assemble(pypto.sum(xb, 0, keepdim=True), [t, 0], part)
            else:
                xb = pypto.view(hs, [blk, hid], [t * blk, 0], valid_shape=[tail, hid])
                pypto.assemble(pypto.sum(xb, 0, keepdim=True), [t, 0], part)
    return hs, part


def launch_pool(hs_t, part_t):
    record_partial_sums(ROWS, HID, BLK)
    pypto.runtime._device_init()
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(hs_t, "hidden_states"), pypto.from_torch(part_t, "part_sums")
    )
    pypto.runtime._device_fini()


def main():
    torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))
    hs = torch.randn(ROWS, HID, dtype=torch.float32).npu()
    part = torch.zeros(N_BLK, HID, dtype=torch.float32).npu()
    launch_pool(hs, part)
    pooled = part.cpu().sum(0) / ROWS
    ref = hs.cpu().mean(0)
    print("max err", (pooled - ref).abs().max().item())


if __name__ == "__main__":
    main()
