"""Query projection for a padded batch of variable-length sequences (fp16 in, fp16 out).

x is [B * S_PAD, HIDDEN] with seq_lens[b] (int32) real tokens per sequence; only the
real rows are projected, the padded rows of `out` are left as the caller set them.
"""
import torch

import pypto

B, S_PAD, HIDDEN, Q_DIM = 4, 128, 256, 128
FP16 = pypto.DT_FP16
FP32 = pypto.DT_FP32

# cube tiles derived from the problem: K split in 4, N in one L1 tile
K_L0 = HIDDEN // 4
CUBE_M = [64, 64]
CUBE_K = [K_L0, HIDDEN]
CUBE_N = [Q_DIM // 2, Q_DIM]


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def ragged_q_proj(
    x: pypto.Tensor([B * S_PAD, HIDDEN], FP16),
    w_q: pypto.Tensor([HIDDEN, Q_DIM], FP16),
    seq_lens: pypto.Tensor([B], pypto.DT_INT32),
    out: pypto.Tensor([B * S_PAD, Q_DIM], FP16),
):
    pypto.set_cube_tile_shapes(CUBE_M, CUBE_K, CUBE_N)
    pypto.set_vec_tile_shapes(64, Q_DIM)
    for b in pypto.loop(B, name="seq", idx_name="b"):
        cur_len = seq_lens[b]
        xb = pypto.view(x, [S_PAD, HIDDEN], [b * S_PAD, 0], valid_shape=[cur_len, HIDDEN])
        qb = pypto.matmul(xb, w_q, FP32)
        qb = pypto.view(qb, [S_PAD, Q_DIM], [0, 0], valid_shape=[cur_len, Q_DIM])
        pypto.assemble(pypto.cast(qb, FP16), [b * S_PAD, 0], out)


def q_proj_golden(x, w_q, seq_lens, out):
    ref = out.clone()
    for b in range(B):
        n = int(seq_lens[b])
        rows = slice(b * S_PAD, b * S_PAD + n)
        ref[rows] = (x[rows].float() @ w_q.float()).half()
    return ref


@pypto.options(name="ragged_q_proj", pass_options={"cube_l1_reuse_setting": {-1: 4}})
def test_ragged_q_proj():
    torch.manual_seed(5)
    x = torch.randn(B * S_PAD, HIDDEN, dtype=torch.float16) * 0.1
    w_q = torch.randn(HIDDEN, Q_DIM, dtype=torch.float16) * 0.1
    seq_lens = torch.tensor([128, 1, 77, 64], dtype=torch.int32)
    out = torch.zeros(B * S_PAD, Q_DIM, dtype=torch.float16)
    ref = q_proj_golden(x, w_q, seq_lens, out)
    ragged_q_proj(x, w_q, seq_lens, out)
    assert ref.shape == out.shape
