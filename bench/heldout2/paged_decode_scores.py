"""Decode-step attention logits against a per-request KV cache with ragged lengths."""

import math

import torch

import pypto

BATCH = 4
MAX_SEQ = 1024
HEAD_DIM = 64
KV_BLK = 64


def block_scores(q_row, k_blk, scale):
    # (1, 1, D) * (1, BLK, D) -> (1, BLK, 1)
    prod = q_row * k_blk
    return pypto.sum(prod, -1, keepdim=True) * scale


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def decode_logits(
    q: pypto.Tensor[[BATCH, 1, HEAD_DIM], pypto.DT_FP32],
    k_cache: pypto.Tensor[[BATCH, MAX_SEQ, HEAD_DIM], pypto.DT_FP32],
    seq_lens: pypto.Tensor[[BATCH], pypto.DT_INT32],
    logits: pypto.Tensor[[BATCH, MAX_SEQ, 1], pypto.DT_FP32],
):
    scale = 1.0 / math.sqrt(HEAD_DIM)
    pypto.set_vec_tile_shapes(1, KV_BLK, HEAD_DIM)
    for b in pypto.loop(BATCH, name="req", idx_name="b"):
        kv_len = seq_lens[b]
        n_blk = (kv_len + KV_BLK - 1) // KV_BLK
        q_row = pypto.view(q, [1, 1, HEAD_DIM], [b, 0, 0])
        for j in pypto.loop(n_blk, name="kv_blocks", idx_name="j"):
            start = j * KV_BLK
            k_blk = pypto.view(k_cache, [1, KV_BLK, HEAD_DIM], [b, start, 0])
            s = block_scores(q_row, k_blk, scale)
            pypto.assemble(s, [b, start, 0], logits)


def test_decode_logits():
    q = torch.randn(BATCH, 1, HEAD_DIM)
    k_cache = torch.randn(BATCH, MAX_SEQ, HEAD_DIM)
    seq_lens = torch.tensor([1024, 77, 300, 5], dtype=torch.int32)
    logits = torch.zeros(BATCH, MAX_SEQ, 1)
    decode_logits(q, k_cache, seq_lens, logits)
    for b in range(BATCH):
        n = int(seq_lens[b])
        ref = (k_cache[b, :n] @ q[b, 0]) / math.sqrt(HEAD_DIM)
        assert ref.shape[0] == n


if __name__ == "__main__":
    test_decode_logits()
