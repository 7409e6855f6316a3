"""Exact-GELU substitute without erf: Phi(x) approximated by an odd polynomial.

pypto 0.2.0 has no erf, so Phi(x) = 0.5 + x * P(x^2) with a degree-23 least-squares fit
on [-4, 4] (Horner in x^2), then gelu(x) = x * Phi(x). x is clamped to the fit range.
"""
import torch

import pypto

ROWS, COLS = 1024, 1024
ROW_BLOCK = 128
FP32 = pypto.DT_FP32

# odd coefficients c1, c3, ..., c23 of Phi(x) - 0.5
PHI_ODD = [
    0.398942, -0.0664898, 0.0099723, -0.00118612, 0.000114778, -9.22176e-06,
    6.15577e-07, -3.33319e-08, 1.39295e-09, -4.152e-11, 7.74409e-13, -6.71772e-15,
]
HORNER = PHI_ODD[::-1]


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def gelu_poly(
    x: pypto.Tensor((ROWS, COLS), FP32),
    out: pypto.Tensor((ROWS, COLS), FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    for r in pypto.loop(ROWS // ROW_BLOCK, name="gelu_rows", idx_name="r"):
        xb = pypto.view(x, [ROW_BLOCK, COLS], [r * ROW_BLOCK, 0])
        xc = pypto.clip(xb, min=-4.0, max=4.0)
        x2 = xc * xc
        p = x2 * HORNER[0] + HORNER[1]
        for c in HORNER[2:]:
            p = p * x2 + c
        phi = p * xc + 0.5
        pypto.assemble(xb * phi, [r * ROW_BLOCK, 0], out)


def test_gelu_poly_matches_erf():
    x = torch.linspace(-6, 6, ROWS * COLS).reshape(ROWS, COLS)
    out = torch.zeros_like(x)
    gelu_poly(x, out)
    xc = x.clamp(-4, 4)
    x2 = xc * xc
    p = torch.zeros_like(x)
    for c in HORNER:
        p = p * x2 + c
    approx = x * (p * xc + 0.5)
    assert (approx - torch.nn.functional.gelu(x)).abs().max() < 1e-2
