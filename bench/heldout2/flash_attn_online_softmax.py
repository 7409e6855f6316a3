"""Single-head flash attention forward with an online (streaming) softmax over KV blocks."""

import math

import torch

import pypto

Q_BLK = 64
KV_LEN = 512
KV_BLK = 64
D = 64


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def flash_fwd(
    q: pypto.Tensor([Q_BLK, D], pypto.DT_FP32),
    k: pypto.Tensor([KV_LEN, D], pypto.DT_FP32),
    v: pypto.Tensor([KV_LEN, D], pypto.DT_FP32),
    o: pypto.Tensor([Q_BLK, D], pypto.DT_FP32),
):
    scale = 1.0 / math.sqrt(D)
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    pypto.set_vec_tile_shapes(64, 64)
    m_run = pypto.tensor([Q_BLK, 1], pypto.DT_FP32, "m_run")
    l_run = pypto.zeros(Q_BLK, 1, dtype=pypto.DT_FP32)
    acc = pypto.zeros(Q_BLK, D, dtype=pypto.DT_FP32)
    for j in pypto.loop(KV_LEN // KV_BLK, name="kv", idx_name="j"):
        kb = pypto.view(k, [KV_BLK, D], [j * KV_BLK, 0])
        vb = pypto.view(v, [KV_BLK, D], [j * KV_BLK, 0])
        s = pypto.matmul(q, kb, pypto.DT_FP32, b_trans=True) * scale
        blk_max = pypto.amax(s, -1, keepdim=True)
        m_new = pypto.maximum(m_run, blk_max)
        p = pypto.exp(s - m_new)
        alpha = pypto.exp(m_run - m_new)
        l_run[:] = l_run * alpha + pypto.sum(p, -1, keepdim=True)
        acc[:] = acc * alpha + pypto.matmul(p, vb, pypto.DT_FP32)
        m_run[:] = m_new
    o[:] = acc / l_run


def test_flash_fwd():
    q = torch.randn(Q_BLK, D)
    k = torch.randn(KV_LEN, D)
    v = torch.randn(KV_LEN, D)
    o = torch.zeros(Q_BLK, D)
    flash_fwd(q, k, v, o)
    ref = torch.softmax(q @ k.T / math.sqrt(D), dim=-1) @ v
    assert o.shape == ref.shape


if __name__ == "__main__":
    test_flash_fwd()
