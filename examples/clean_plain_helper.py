"""RMS-normalise each row block, then apply a sigmoid-approximated GELU, via plain helpers.

`_rms_normalize` and `_gelu_sigmoid` are ordinary (undecorated) Python functions: pypto
*executes* them while tracing, so they may return tensors.  They contain no `if` on a symbolic
value, which would fail there (see pitfall_helper_symbolic_if.py).  The kernel walks the rows in
blocks of 16 and writes each block into the output slice.

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto as pt

ROWS, HIDDEN = 128, 256
BLOCK = 16
EPS = 1e-5


def _rms_normalize(x, eps):
    """Plain helper: x / sqrt(mean(x^2) + eps) along the last axis."""
    mean_sq = pt.sum(x * x, -1, keepdim=True) * (1.0 / HIDDEN)
    return x * pt.rsqrt(mean_sq + eps)


def _gelu_sigmoid(x):
    """Plain helper: GELU approximated as x * sigmoid(1.702 x)."""
    return x * pt.sigmoid(x * 1.702)


@pt.frontend.jit
def norm_gelu(
    x: pt.Tensor((ROWS, HIDDEN), pt.DT_FP32),
    out: pt.Tensor((ROWS, HIDDEN), pt.DT_FP32),
):
    pt.set_vec_tile_shapes(BLOCK, HIDDEN)
    for r in pt.loop(ROWS // BLOCK, name="row_blocks", idx_name="r"):
        blk = x[r * BLOCK:(r + 1) * BLOCK, :]
        out[r * BLOCK:(r + 1) * BLOCK, :] = _gelu_sigmoid(_rms_normalize(blk, EPS))


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(8)
    return {"x": torch.randn(ROWS, HIDDEN, generator=g), "out": torch.zeros(ROWS, HIDDEN)}


def reference(x, out):
    import torch

    y = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return {"out": y * torch.sigmoid(1.702 * y)}
