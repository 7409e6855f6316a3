# caught: PTO016
"""A pass-through output: the bias goes out unchanged next to the scaled rows, written by a move."""
import pypto

ROWS, COLS = 64, 128


@pypto.frontend.jit
def scale_and_keep_bias(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    bias: pypto.Tensor([1, COLS], pypto.DT_FP32),
    y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    bias_out: pypto.Tensor([1, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, COLS)
    for r in pypto.loop(ROWS // 16, name="rows", idx_name="r"):
        blk = pypto.view(x, [16, COLS], [r * 16, 0])
        pypto.assemble(blk * 0.5, [r * 16, 0], y)
    kept = bias
    bias_out.move(kept)
