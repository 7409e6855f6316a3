# near-miss: PTO004
"""pypto 0.2.0 checks the 32-byte tile rule for a reduction over the last axis only."""
import pypto

ROWS, HEADS, D = 512, 96, 170


@pypto.frontend.jit
def column_and_head_sums(
    col: pypto.Tensor((ROWS, 1), pypto.DT_FP32),
    heads: pypto.Tensor((1, HEADS, D), pypto.DT_FP32),
    square: pypto.Tensor((4, 4), pypto.DT_FP32),
    col_sum: pypto.Tensor((1, 1), pypto.DT_FP32),
    head_sum: pypto.Tensor((1, 1, D), pypto.DT_FP32),
    square_t: pypto.Tensor((4, 4), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(ROWS, 1)
    col_sum[:] = pypto.sum(col, dim=0, keepdim=True)
    pypto.set_vec_tile_shapes(1, HEADS, D)
    head_sum[:] = pypto.sum(heads, dim=1, keepdim=True)
    pypto.set_vec_tile_shapes(4, 4)
    square_t[:] = pypto.transpose(square, 0, 1)
