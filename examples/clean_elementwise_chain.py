"""SwiGLU-style gated residual: out = (x * sigmoid(x)) * gate + alpha * res.

A fused elementwise chain over a static 256x512 fp32 activation, the kind of tail that
follows the two projections of a gated MLP.  One vector tile shape (16, 256) covers every op:
16 * 256 * 4 B = 16 KiB per tile, last dim 256 * 4 B = 1 KiB (32-byte aligned).

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto

ROWS, COLS = 256, 512
F32 = pypto.DT_FP32


@pypto.frontend.jit
def swiglu_residual(
    x: pypto.Tensor((ROWS, COLS), F32),
    gate: pypto.Tensor((ROWS, COLS), F32),
    res: pypto.Tensor((ROWS, COLS), F32),
    out: pypto.Tensor((ROWS, COLS), F32),
    alpha: float = 0.5,
):
    pypto.set_vec_tile_shapes(16, 256)
    act = x * pypto.sigmoid(x)          # SiLU
    gated = act * gate
    # add(a, b, alpha=k) computes a + k * b
    out[:] = pypto.add(gated, res, alpha=alpha)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(1)
    return {
        "x": torch.randn(ROWS, COLS, generator=g),
        "gate": torch.randn(ROWS, COLS, generator=g),
        "res": torch.randn(ROWS, COLS, generator=g),
        "out": torch.zeros(ROWS, COLS),
    }


def reference(x, gate, res, out, alpha=0.5):
    import torch

    return {"out": x * torch.sigmoid(x) * gate + alpha * res}
