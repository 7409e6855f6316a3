"""Scale the live part of each request's key cache (ragged lengths, block-wise)."""

import torch

import pypto

BATCH, MAX_SEQ, D = 4, 512, 128
BLK = 64


def live_rows(kv_len, start):
    # rows of this block that hold real tokens
    return pypto.min(BLK, kv_len - start)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def scale_keys(
    k_cache: pypto.Tensor[[BATCH, MAX_SEQ, D], pypto.DT_FP32],
    k_scale: pypto.Tensor[[BATCH, 1, D], pypto.DT_FP32],
    seq_lens: pypto.Tensor[[BATCH], pypto.DT_INT32],
    k_out: pypto.Tensor[[BATCH, MAX_SEQ, D], pypto.DT_FP32],
):
    pypto.set_vec_tile_shapes(1, BLK, D)
    for b in pypto.loop(BATCH, name="req", idx_name="b"):
        kv_len = seq_lens[b]
        sc = pypto.view(k_scale, [1, 1, D], [b, 0, 0])
        for j in pypto.loop((kv_len + BLK - 1) // BLK, name="blocks", idx_name="j"):
            start = j * BLK
            valid = live_rows(kv_len, start)
            kb = pypto.view(k_cache, [1, BLK, D], [b, start, 0], valid_shape=[1, valid, D])
            pypto.assemble(kb * sc, [b, start, 0], k_out)


def test_scale_keys():
    k_cache = torch.randn(BATCH, MAX_SEQ, D)
    k_scale = torch.rand(BATCH, 1, D) + 0.5
    seq_lens = torch.tensor([512, 65, 200, 1], dtype=torch.int32)
    k_out = torch.zeros(BATCH, MAX_SEQ, D)
    scale_keys(k_cache, k_scale, seq_lens, k_out)
    for b in range(BATCH):
        n = int(seq_lens[b])
        ref = k_cache[b, :n] * k_scale[b]
        assert ref.shape == (n, D)


if __name__ == "__main__":
    test_scale_keys()
