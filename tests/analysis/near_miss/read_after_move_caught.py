# caught: PTO023
"""A running sum that starts from the first block by moving it into the output, then keeps
reading the block: the move hands `first` over to `total`, so `first` is empty when the scaled
copy reads it (0.2.0: tile shape not set, a misleading message)."""
import pypto

BLOCK, COLS = 16, 64


@pypto.frontend.jit
def running_sum(
    x: pypto.Tensor([4 * BLOCK, COLS], pypto.DT_FP32),
    total: pypto.Tensor([BLOCK, COLS], pypto.DT_FP32),
    scaled: pypto.Tensor([BLOCK, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, COLS)
    first = pypto.view(x, [BLOCK, COLS], [0, 0]) * 1.0
    total[:] = first
    for b in pypto.loop(1, 4, name="ACC", idx_name="b"):
        total[:] = total + pypto.view(x, [BLOCK, COLS], [b * BLOCK, 0])
    scaled[:] = first * 0.5
