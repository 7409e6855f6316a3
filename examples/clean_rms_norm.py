"""RMS norm of fp16 hidden states, computed in fp32: out = x * rsqrt(mean(x^2) + eps) * gamma.

Uses `from pypto import frontend` for the decorator.  Inputs are cast to fp32, the row mean of
squares is a keepdim reduction, the result is cast back to fp16.  Tile (4, 1024): the fp32 tile is
16 KiB and the last dim is 1024 * 2 B / 1024 * 4 B, both 32-byte aligned.

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto
from pypto import frontend

TOKENS, HIDDEN = 64, 1024
EPS = 1e-6


@frontend.jit
def rms_norm_fp16(
    x: pypto.Tensor((TOKENS, HIDDEN), pypto.DT_FP16),
    gamma: pypto.Tensor((1, HIDDEN), pypto.DT_FP16),
    out: pypto.Tensor((TOKENS, HIDDEN), pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(4, HIDDEN)
    xf = pypto.cast(x, pypto.DT_FP32)
    mean_sq = pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / HIDDEN)
    inv_rms = pypto.rsqrt(mean_sq + EPS)
    g = pypto.cast(gamma, pypto.DT_FP32)
    y = xf * inv_rms * g
    out[:] = pypto.cast(y, pypto.DT_FP16)


def example_inputs():
    import torch

    gen = torch.Generator().manual_seed(3)
    return {
        "x": torch.randn(TOKENS, HIDDEN, generator=gen).half(),
        "gamma": (1.0 + 0.1 * torch.randn(1, HIDDEN, generator=gen)).half(),
        "out": torch.zeros(TOKENS, HIDDEN, dtype=torch.float16),
    }


def reference(x, gamma, out):
    import torch

    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + EPS) * gamma.float()
    return {"out": y.half()}
