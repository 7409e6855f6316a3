"""Position-dependent scaling of a [SEQ, HIDDEN] fp32 activation, as a legacy pypto.function graph.

Row blocks before WARMUP_BLOCKS are damped by WARMUP_GAIN, the others pass through
scaled by 1.0. The branch is on the loop index, so it is written with pypto.cond.
"""
import os

import torch

import pypto

SEQ, HIDDEN = 512, 256
BLK = 32
WARMUP_BLOCKS = 4
WARMUP_GAIN = 0.25
FP32 = pypto.DT_FP32


def scale_block(x, y, k, gain):
    rows = pypto.view(x, [BLK, HIDDEN], [k * BLK, 0])
    pypto.assemble(rows * gain, [k * BLK, 0], y)


def record_warmup_scale(x, y):
    with pypto.function("WARMUP_SCALE", x, y):
        pypto.set_vec_tile_shapes(BLK, HIDDEN)
        for k in pypto.loop(SEQ // BLK, name="seq_blk", idx_name="k"):
            if pypto.cond(k < WARMUP_BLOCKS):
                scale_block(x, y, k, WARMUP_GAIN)
            else:
                scale_block(x, y, k, 1.0)


def launch_warmup_scale(x_t, y_t):
    x = pypto.from_torch(x_t, "x")
    y = pypto.from_torch(y_t, "y")
    record_warmup_scale(x, y)


def warmup_golden(x):
    gain = torch.ones(SEQ, 1)
    gain[: WARMUP_BLOCKS * BLK] = WARMUP_GAIN
    return x * gain.to(x.device)


def test_warmup_scale_onboard():
    import torch_npu  # noqa: F401

    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    x_t = torch.randn(SEQ, HIDDEN, dtype=torch.float32).npu()
    y_t = torch.zeros(SEQ, HIDDEN, dtype=torch.float32).npu()
    launch_warmup_scale(x_t, y_t)
    torch.testing.assert_close(y_t.cpu(), warmup_golden(x_t).cpu())
