"""Multi-head attention probabilities: softmax(q @ k^T * scale) for all heads at once."""

import math

import torch

import pypto


class AttnTiling:
    """Tile choices for one attention block, derived from the problem size."""

    def __init__(self, heads, q_len, kv_len, head_dim):
        self.heads = heads
        self.q_len = q_len
        self.kv_len = kv_len
        self.head_dim = head_dim
        self.vec_tile = (16, kv_len)
        self.cube_m = [64, 64]
        self.cube_k = [head_dim, head_dim]
        self.cube_n = [128, 128]


HEADS, Q_LEN, KV_LEN, HEAD_DIM = 8, 128, 128, 64
TILING = AttnTiling(HEADS, Q_LEN, KV_LEN, HEAD_DIM)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def attn_probs(
    q: pypto.Tensor[[HEADS, Q_LEN, HEAD_DIM], pypto.DT_FP16],
    k: pypto.Tensor[[HEADS, KV_LEN, HEAD_DIM], pypto.DT_FP16],
    probs: pypto.Tensor[[HEADS, Q_LEN, KV_LEN], pypto.DT_FP32],
):
    scale = 1.0 / math.sqrt(TILING.head_dim)
    pypto.set_cube_tile_shapes(TILING.cube_m, TILING.cube_k, TILING.cube_n)
    pypto.set_vec_tile_shapes(*TILING.vec_tile)
    scores = pypto.matmul(q, k, pypto.DT_FP32, b_trans=True)
    scores = scores * scale
    row_max = pypto.amax(scores, -1, keepdim=True)
    e = pypto.exp(scores - row_max)
    denom = pypto.sum(e, -1, keepdim=True)
    probs[:] = e / denom


def test_attn_probs():
    q = torch.randn(HEADS, Q_LEN, HEAD_DIM, dtype=torch.float16)
    k = torch.randn(HEADS, KV_LEN, HEAD_DIM, dtype=torch.float16)
    probs = torch.empty(HEADS, Q_LEN, KV_LEN, dtype=torch.float32)
    attn_probs(q, k, probs)
    ref = torch.softmax((q.float() @ k.float().transpose(-1, -2)) / math.sqrt(HEAD_DIM), dim=-1)
    assert probs.shape == ref.shape


if __name__ == "__main__":
    test_attn_probs()
