# near-miss: PTO026
"""The same blocks with the tail given its valid rows, and assembled back where they fit."""
import pypto

ROWS, COLS, BLOCK = 128, 64, 48


@pypto.frontend.jit
def halve_blocks(
    x: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
    out: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, COLS)
    for b in range(3):
        rows = min(BLOCK, ROWS - b * BLOCK)
        part = pypto.view(x, [BLOCK, COLS], [b * BLOCK, 0], valid_shape=[rows, COLS])
        pypto.assemble(part * 0.5, [b * BLOCK, 0], out)
    for i in pypto.loop(ROWS // 16, name="rows", idx_name="i"):
        blk = pypto.view(x, [16, COLS], [i * 16, 0])
        out[i * 16:(i + 1) * 16, :] = blk + 0.0
