"""Batched attention scores: scores = (q @ k^T) * 1/sqrt(D), fp16 inputs, fp32 scores.

A 3-D batched matmul with `b_trans=True` (k is stored [B, S, D]).  3-D matmuls need both the
cube tiles and a 3-D vector tile shape; the scaling is a 3-D vector op with tile (1, 64, 64)
(64 * 4 B = 256 B, 32-byte aligned).

Pitfalls: none.
Expected diagnostics: none.
"""
import math

import pypto

BATCH, SEQ, HEAD_DIM = 4, 64, 64
SCALE = 1.0 / math.sqrt(HEAD_DIM)


@pypto.frontend.jit
def attention_scores(
    q: pypto.Tensor((BATCH, SEQ, HEAD_DIM), pypto.DT_FP16),
    k: pypto.Tensor((BATCH, SEQ, HEAD_DIM), pypto.DT_FP16),
    scores: pypto.Tensor((BATCH, SEQ, SEQ), pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    pypto.set_vec_tile_shapes(1, 64, 64)
    raw = pypto.matmul(q, k, pypto.DT_FP32, b_trans=True)
    scores[:] = raw * SCALE


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(11)
    return {
        "q": torch.randn(BATCH, SEQ, HEAD_DIM, generator=g).half(),
        "k": torch.randn(BATCH, SEQ, HEAD_DIM, generator=g).half(),
        "scores": torch.zeros(BATCH, SEQ, SEQ),
    }


def reference(q, k, scores):
    return {"scores": (q.float() @ k.float().transpose(-1, -2)) * SCALE}
