"""Single-token decode attention for a group of 16 query heads sharing one KV head (bf16).

Each batch row owns S_MAX cache slots; kv_lens[b] (int32) says how many are filled.
    scores = q_b @ k_b^T * scale, p = softmax(scores), o_b = p @ v_b
"""
import math

import torch

import pypto

BATCH, GROUP, S_MAX, HEAD_DIM = 8, 16, 256, 128
SCALE = 1.0 / math.sqrt(HEAD_DIM)
BF16 = pypto.DT_BF16
FP32 = pypto.DT_FP32


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def decode_attention(
    q: pypto.Tensor([BATCH * GROUP, HEAD_DIM], BF16),
    k_cache: pypto.Tensor([BATCH * S_MAX, HEAD_DIM], BF16),
    v_cache: pypto.Tensor([BATCH * S_MAX, HEAD_DIM], BF16),
    kv_lens: pypto.Tensor([BATCH], pypto.DT_INT32),
    out: pypto.Tensor([BATCH * GROUP, HEAD_DIM], BF16),
):
    for b in pypto.loop(BATCH, name="decode_b", idx_name="b"):
        kv_len = kv_lens[b]
        qb = pypto.view(q, [GROUP, HEAD_DIM], [b * GROUP, 0])
        kb = pypto.view(k_cache, [S_MAX, HEAD_DIM], [b * S_MAX, 0])
        vb = pypto.view(v_cache, [S_MAX, HEAD_DIM], [b * S_MAX, 0], valid_shape=[kv_len, HEAD_DIM])

        pypto.set_cube_tile_shapes([16, 16], [64, 128], [128, 256])
        scores = pypto.matmul(qb, kb, FP32, b_trans=True)

        pypto.set_vec_tile_shapes(GROUP, S_MAX)
        scores = scores * SCALE
        row_max = pypto.amax(scores, -1, keepdim=True)
        p = pypto.exp(scores - row_max)
        p = p / pypto.sum(p, -1, keepdim=True)

        pypto.set_cube_tile_shapes([16, 16], [64, 256], [128, 128])
        ob = pypto.matmul(pypto.cast(p, BF16), vb, FP32)

        pypto.set_vec_tile_shapes(GROUP, HEAD_DIM)
        pypto.assemble(pypto.cast(ob, BF16), [b * GROUP, 0], out)


def decode_golden(q, k, v, kv_lens):
    outs = []
    for b in range(BATCH):
        n = int(kv_lens[b])
        qb = q[b * GROUP:(b + 1) * GROUP].float()
        kb = k[b * S_MAX:b * S_MAX + n].float()
        vb = v[b * S_MAX:b * S_MAX + n].float()
        p = torch.softmax(qb @ kb.T * SCALE, dim=-1)
        outs.append(p @ vb)
    return torch.cat(outs).to(torch.bfloat16)


def test_decode_attention_ragged():
    q = torch.randn(BATCH * GROUP, HEAD_DIM, dtype=torch.bfloat16)
    k = torch.randn(BATCH * S_MAX, HEAD_DIM, dtype=torch.bfloat16)
    v = torch.randn(BATCH * S_MAX, HEAD_DIM, dtype=torch.bfloat16)
    kv_lens = torch.tensor([256, 17, 130, 1, 64, 200, 255, 9], dtype=torch.int32)
    out = torch.zeros(BATCH * GROUP, HEAD_DIM, dtype=torch.bfloat16)
    decode_attention(q, k, v, kv_lens, out)
    assert decode_golden(q, k, v, kv_lens).shape == out.shape
