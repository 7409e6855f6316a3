"""Per-channel affine transform (y = x * scale + shift) over row blocks with `pypto.loop_unroll`.

`loop_unroll(..., unroll_list=[4, 2])` compiles the body for 4, 2 and 1 blocks per iteration
(1 is appended automatically); the body must process `f` blocks, so the view height is
`BLOCK * f`.  scale/shift are (1, COLS) rows broadcast over the block.

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto

ROWS, COLS = 256, 128
BLOCK = 16
F32 = pypto.DT_FP32


@pypto.frontend.jit
def affine_rows(
    x: pypto.Tensor((ROWS, COLS), F32),
    scale: pypto.Tensor((1, COLS), F32),
    shift: pypto.Tensor((1, COLS), F32),
    y: pypto.Tensor((ROWS, COLS), F32),
):
    pypto.set_vec_tile_shapes(BLOCK, COLS)
    n_blocks = ROWS // BLOCK
    for i, f in pypto.loop_unroll(0, n_blocks, 1, name="blk", idx_name="b", unroll_list=[4, 2]):
        part = pypto.view(x, [BLOCK * f, COLS], [i * BLOCK, 0])
        pypto.assemble(part * scale + shift, [i * BLOCK, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(6)
    return {
        "x": torch.randn(ROWS, COLS, generator=g),
        "scale": torch.rand(1, COLS, generator=g) + 0.5,
        "shift": torch.randn(1, COLS, generator=g),
        "y": torch.zeros(ROWS, COLS),
    }


def reference(x, scale, shift, y):
    return {"y": x * scale + shift}
