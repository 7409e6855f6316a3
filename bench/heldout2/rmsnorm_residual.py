"""Fused residual-add + RMSNorm for a decoder layer (static batch)."""

from dataclasses import dataclass

import torch

import pypto


@dataclass
class RmsCfg:
    tokens: int = 64
    hidden: int = 512
    eps: float = 1e-6


CFG = RmsCfg()


def rms_scale(h, gamma, eps, hidden):
    # mean of squares over the hidden axis, kept as a column
    sq = h * h
    ms = pypto.sum(sq, -1, keepdim=True) * (1.0 / hidden)
    inv = pypto.rsqrt(ms + eps)
    return h * inv * gamma


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def add_rmsnorm(
    x: pypto.Tensor([CFG.tokens, CFG.hidden], pypto.DT_FP32),
    residual: pypto.Tensor([CFG.tokens, CFG.hidden], pypto.DT_FP32),
    gamma: pypto.Tensor([1, CFG.hidden], pypto.DT_FP32),
    h_out: pypto.Tensor([CFG.tokens, CFG.hidden], pypto.DT_FP32),
    y: pypto.Tensor([CFG.tokens, CFG.hidden], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 512)
    h = x + residual
    h_out[:] = h
    y = rms_scale(h, gamma, CFG.eps, CFG.hidden)


def reference(x, residual, gamma, eps):
    h = x + residual
    var = h.pow(2).mean(-1, keepdim=True)
    return h, h * torch.rsqrt(var + eps) * gamma


def test_add_rmsnorm():
    torch.manual_seed(0)
    x = torch.randn(CFG.tokens, CFG.hidden, dtype=torch.float32)
    res = torch.randn(CFG.tokens, CFG.hidden, dtype=torch.float32)
    gamma = torch.rand(1, CFG.hidden, dtype=torch.float32) + 0.5
    h_out = torch.zeros_like(x)
    y = torch.zeros_like(x)
    add_rmsnorm(x, res, gamma, h_out, y)
    h_ref, y_ref = reference(x, res, gamma, CFG.eps)
    assert h_out.shape == h_ref.shape
    assert y.shape == y_ref.shape


if __name__ == "__main__":
    test_add_rmsnorm()
