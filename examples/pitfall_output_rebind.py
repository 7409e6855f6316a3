"""Layer-norm statistics with two outputs: per-row mean and reciprocal standard deviation.

Pitfall PTO001 (output parameter rebound), line 31 in `ln_stats`: `rstd_out = pypto.rsqrt(...)`
rebinds the Python name `rstd_out` instead of writing the caller's tensor; it should be
`rstd_out[:] = pypto.rsqrt(var + EPS)`.  `mean_out[:] = mean` two lines above is the correct
form, which makes the slip easy to miss in review.  pypto 0.2.0 accepts the kernel silently and
drops the rsqrt as dead code, so `rstd_out` is never written.

Expected diagnostics:
    PTO001 line 31
"""
import pypto

ROWS, HIDDEN = 128, 256
EPS = 1e-5
F32 = pypto.DT_FP32


@pypto.frontend.jit
def ln_stats(
    x: pypto.Tensor((ROWS, HIDDEN), F32),
    mean_out: pypto.Tensor((ROWS, 1), F32),
    rstd_out: pypto.Tensor((ROWS, 1), F32),
):
    pypto.set_vec_tile_shapes(16, HIDDEN)
    mean = pypto.sum(x, -1, keepdim=True) * (1.0 / HIDDEN)
    centered = x - mean
    var = pypto.sum(centered * centered, -1, keepdim=True) * (1.0 / HIDDEN)
    mean_out[:] = mean
    # the second output is "assigned" like a local variable
    rstd_out = pypto.rsqrt(var + EPS)  # PTO001


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(21)
    return {
        "x": torch.randn(ROWS, HIDDEN, generator=g) * 3.0 + 1.0,
        "mean_out": torch.zeros(ROWS, 1),
        "rstd_out": torch.zeros(ROWS, 1),
    }


def reference(x, mean_out, rstd_out):
    import torch

    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return {"mean_out": mean, "rstd_out": torch.rsqrt(var + EPS)}
