"""Three-stage elementwise pipeline (scale, exp + bias, halve) split into `loop(1)` regions.

Pitfall PTO012 (consecutive loop(1) regions that could be merged), lines 29 and 31 in
`staged_pipeline`: code ported from the legacy `pypto.function` style keeps each stage in its
own `pypto.loop(1)`, and the first stage sits before them at the top level (inside the implicit
`default_loop_1`).  0.2.0 does not merge them: three control loops and three stitches instead of
one.  Put all three statements in one region (or simply at the top level).  Silently accepted.

Expected diagnostics:
    PTO012 line 27
    PTO012 line 29
"""
import pypto

ROWS, COLS = 128, 128
F32 = pypto.DT_FP32


@pypto.frontend.jit
def staged_pipeline(
    x: pypto.Tensor((ROWS, COLS), F32),
    bias: pypto.Tensor((ROWS, COLS), F32),
    out: pypto.Tensor((ROWS, COLS), F32),
):
    pypto.set_vec_tile_shapes(32, COLS)
    scaled = x * 0.125
    for _ in pypto.loop(1, name="stage_exp", idx_name="s1"):  # PTO012
        shifted = pypto.exp(scaled) + bias
    for _ in pypto.loop(1, name="stage_out", idx_name="s2"):  # PTO012
        out[:] = shifted * 0.5


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(31)
    return {
        "x": torch.randn(ROWS, COLS, generator=g),
        "bias": torch.randn(ROWS, COLS, generator=g),
        "out": torch.zeros(ROWS, COLS),
    }


def reference(x, bias, out):
    import torch

    return {"out": (torch.exp(x * 0.125) + bias) * 0.5}
