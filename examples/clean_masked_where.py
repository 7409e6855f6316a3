"""Soft-thresholding (shrinkage) with a clamp: out = clip(sign(x) * max(|x| - lam, 0), -6, 6).

Written the way a vector author would: a comparison produces a BOOL mask, `pypto.where`
selects between the shrunk value and 0, `pypto.clip` bounds the result.  Tile (16, 256):
fp32 16 KiB, BOOL last dim 256 B (32-byte aligned as BOOL outputs require).

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto

ROWS, COLS = 128, 256
LAMBDA = 0.5
CLAMP = 6.0


@pypto.frontend.jit
def soft_threshold(
    x: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
    out: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, COLS)
    mag = pypto.abs(x)
    keep = mag > LAMBDA
    shrunk = pypto.sign(x) * (mag - LAMBDA)
    out[:] = pypto.clip(pypto.where(keep, shrunk, 0.0), -CLAMP, CLAMP)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(12)
    return {"x": torch.randn(ROWS, COLS, generator=g) * 4.0, "out": torch.zeros(ROWS, COLS)}


def reference(x, out):
    import torch

    shrunk = torch.sign(x) * torch.clamp(x.abs() - LAMBDA, min=0.0)
    return {"out": torch.clamp(shrunk, -CLAMP, CLAMP)}
