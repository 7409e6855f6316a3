"""Temperature-scaled row softmax over a 128x512 fp32 score matrix.

Classic max-subtracted softmax written out op by op (amax -> sub -> exp -> sum -> div) with
`import pypto as pto`.  The tile (8, 512) keeps whole rows in one tile, as the reductions need,
and its last dim is 512 * 4 B = 2 KiB (32-byte aligned).

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto as pto

ROWS, COLS = 128, 512
TEMPERATURE = 2.0
INV_TEMP = 1.0 / TEMPERATURE


@pto.frontend.jit
def scaled_softmax(
    x: pto.Tensor[[ROWS, COLS], pto.DT_FP32],
    out: pto.Tensor[[ROWS, COLS], pto.DT_FP32],
):
    pto.set_vec_tile_shapes(8, COLS)
    z = x * INV_TEMP
    row_max = pto.amax(z, -1, keepdim=True)
    e = pto.exp(z - row_max)
    denom = pto.sum(e, -1, keepdim=True)
    out[:] = e / denom


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(2)
    return {"x": torch.randn(ROWS, COLS, generator=g) * 4.0, "out": torch.zeros(ROWS, COLS)}


def reference(x, out):
    import torch

    return {"out": torch.softmax(x * INV_TEMP, dim=-1)}
