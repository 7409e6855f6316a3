"""Causal masking of attention probabilities, block by block, as a legacy pypto.function graph.

probs [SEQ, SEQ] fp32 is cut into BLK x BLK blocks: blocks above the diagonal are
written as zeros, the others keep their lower triangle (tril with a shifted diagonal,
which keeps the whole block below the diagonal).
"""
import math
import os

import torch

import pypto

SEQ = 256
BLK = 64
NB = math.ceil(SEQ / BLK)
FP32 = pypto.DT_FP32


def record_causal_mask(probs, masked):
    with pypto.function("CAUSAL_BLOCK_MASK", probs, masked):
        for r in pypto.loop(NB, name="row_blk", idx_name="r"):
            for c in pypto.loop(NB, name="col_blk", idx_name="c"):
                pypto.set_vec_tile_shapes(BLK, BLK)
                if c > r:
                    zeros = pypto.full([BLK, BLK], 0.0, FP32)
                    pypto.assemble(zeros, [r * BLK, c * BLK], masked)
                else:
                    blk = pypto.view(probs, [BLK, BLK], [r * BLK, c * BLK])
                    kept = pypto.tril(blk, (r - c) * BLK)
                    pypto.assemble(kept, [r * BLK, c * BLK], masked)


def test_causal_block_mask_onboard():
    import torch_npu  # noqa: F401

    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    pypto.runtime._device_init()

    probs = pypto.tensor([SEQ, SEQ], FP32, "probs")
    masked = pypto.tensor([SEQ, SEQ], FP32, "masked")
    record_causal_mask(probs, masked)

    probs_t = torch.rand(SEQ, SEQ, dtype=torch.float32)
    masked_t = torch.empty(SEQ, SEQ, dtype=torch.float32)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(probs_t, "probs_t"), pypto.from_torch(masked_t, "masked_t")
    )
    torch.testing.assert_close(masked_t, torch.tril(probs_t))
    pypto.runtime._device_fini()
