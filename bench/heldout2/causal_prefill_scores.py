"""Causal prefill: scaled q @ k^T per block pair, with the additive mask on diagonal blocks."""

import math

import torch

import pypto

SEQ = 512
D = 64
BLK = 64
NEG = -1.0e4


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def causal_scores(
    q: pypto.Tensor[[SEQ, D], pypto.DT_FP32],
    k: pypto.Tensor[[SEQ, D], pypto.DT_FP32],
    diag_mask: pypto.Tensor[[BLK, BLK], pypto.DT_FP32],
    scores: pypto.Tensor[[SEQ, SEQ], pypto.DT_FP32],
):
    scale = 1.0 / math.sqrt(D)
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    pypto.set_vec_tile_shapes(BLK, BLK)
    for qi in pypto.loop(SEQ // BLK, name="q_blocks", idx_name="qi"):
        qb = pypto.view(q, [BLK, D], [qi * BLK, 0])
        for j in pypto.loop(qi + 1, name="kv_blocks", idx_name="kj", unroll_list=[1, 2, 4]):
            kb = pypto.view(k, [BLK, D], [j * BLK, 0])
            s = pypto.matmul(qb, kb, pypto.DT_FP32, b_trans=True) * scale
            if j == qi:
                pypto.assemble(s + diag_mask, [qi * BLK, j * BLK], scores)
            else:
                pypto.assemble(s, [qi * BLK, j * BLK], scores)


def make_diag_mask():
    m = torch.full((BLK, BLK), NEG)
    return torch.triu(m, diagonal=1)


def test_causal_scores():
    q = torch.randn(SEQ, D)
    k = torch.randn(SEQ, D)
    scores = torch.full((SEQ, SEQ), NEG)
    causal_scores(q, k, make_diag_mask(), scores)
    ref = q @ k.T / math.sqrt(D)
    ref = ref + torch.triu(torch.full((SEQ, SEQ), NEG), diagonal=1)
    assert scores.shape == ref.shape


if __name__ == "__main__":
    test_causal_scores()
