# caught: PTO026
"""Blocks of 48 rows over a 128-row input: the third block starts at 96 and reads to 144."""
import pypto

ROWS, COLS, BLOCK = 128, 64, 48


def scaled_block(src, first_row):
    part = pypto.view(src, [BLOCK, COLS], [first_row, 0])
    return part * 0.5


@pypto.frontend.jit
def halve_blocks(
    x: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
    out: pypto.Tensor((3 * BLOCK, COLS), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, COLS)
    for b in range(3):
        out[b * BLOCK:(b + 1) * BLOCK, :] = scaled_block(x, b * BLOCK)
