"""RMSNorm for fp16 activations: statistics in fp32, result cast back to fp16."""

import torch

import pypto

TOKENS, HIDDEN = 128, 1024
TOK_BLK = 32
EPS = 1e-6


def rms_fp32(xf, w, hidden):
    ms = pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / hidden)
    return xf * pypto.rsqrt(ms + EPS) * w


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def rmsnorm_fp16(
    x: pypto.Tensor[[TOKENS, HIDDEN], pypto.DT_FP16],
    weight: pypto.Tensor[[1, HIDDEN], pypto.DT_FP32],
    y: pypto.Tensor[[TOKENS, HIDDEN], pypto.DT_FP16],
    inv_rms: pypto.Tensor[[TOKENS, 1], pypto.DT_FP32],
):
    pypto.set_vec_tile_shapes(TOK_BLK, 256)
    for t in pypto.loop(TOKENS // TOK_BLK, name="tok", idx_name="t"):
        x_blk = pypto.view(x, [TOK_BLK, HIDDEN], [t * TOK_BLK, 0])
        x_blk = pypto.cast(x_blk, pypto.DT_FP32)
        y_fp32 = rms_fp32(x_blk, weight, HIDDEN)
        y[t * TOK_BLK:(t + 1) * TOK_BLK, :] = pypto.cast(y_fp32, pypto.DT_FP16)
        ms = pypto.sum(x_blk * x_blk, -1, keepdim=True) * (1.0 / HIDDEN)
        pypto.assemble(pypto.rsqrt(ms + EPS), [t * TOK_BLK, 0], inv_rms)


def test_rmsnorm_fp16():
    x = torch.randn(TOKENS, HIDDEN, dtype=torch.float16)
    w = torch.rand(1, HIDDEN) + 0.5
    y = torch.empty(TOKENS, HIDDEN, dtype=torch.float16)
    inv = torch.empty(TOKENS, 1)
    rmsnorm_fp16(x, w, y, inv)
    xf = x.float()
    inv_ref = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    assert y.shape == (xf * inv_ref * w).half().shape
    assert inv.shape == inv_ref.shape


if __name__ == "__main__":
    test_rmsnorm_fp16()
