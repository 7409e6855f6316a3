"""Two-pass softmax over long rows of attention scores, key block by key block (fp32).

scores [B * G, S2] with a precomputed row max [B * G, 1].
Pass 1 accumulates the per-row denominators over key blocks; pass 2 normalises.
"""
import torch

import pypto

B, G, S2, KV_BLK = 4, 16, 2048, 128
N_KV = S2 // KV_BLK
FP32 = pypto.DT_FP32


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def softmax_two_pass(
    scores: pypto.Tensor([B * G, S2], FP32),
    row_max: pypto.Tensor([B * G, 1], FP32),
    denom: pypto.Tensor([B * G, 1], FP32),
    probs: pypto.Tensor([B * G, S2], FP32),
):
    pypto.set_vec_tile_shapes(G, KV_BLK)
    for b in pypto.loop(B, name="batch", idx_name="b"):
        m = pypto.view(row_max, [G, 1], [b * G, 0])
        running = pypto.tensor([G, 1], FP32, "running")
        for s2 in pypto.loop(N_KV, name="kv_blocks", idx_name="s2", unroll_list=[4, 2, 1]):
            blk = pypto.view(scores, [G, KV_BLK], [b * G, s2 * KV_BLK])
            part = pypto.sum(pypto.exp(blk - m), -1, keepdim=True)
            if pypto.is_loop_begin(s2):
                running[:] = part
            else:
                running[:] = running + part
        pypto.assemble(running, [b * G, 0], denom)

    for b in pypto.loop(B, name="batch", idx_name="b", submit_before_loop=True):
        m = pypto.view(row_max, [G, 1], [b * G, 0])
        inv = 1.0 / pypto.view(denom, [G, 1], [b * G, 0])
        for s2 in pypto.loop(N_KV, name="kv_blocks", idx_name="s2"):
            blk = pypto.view(scores, [G, KV_BLK], [b * G, s2 * KV_BLK])
            pypto.assemble(pypto.exp(blk - m) * inv, [b * G, s2 * KV_BLK], probs)


def test_softmax_two_pass():
    scores = torch.randn(B * G, S2) * 3
    row_max = scores.amax(-1, keepdim=True)
    denom = torch.zeros(B * G, 1)
    probs = torch.zeros(B * G, S2)
    softmax_two_pass(scores, row_max, denom, probs)
    expected = torch.softmax(scores, -1)
    assert expected.shape == probs.shape
