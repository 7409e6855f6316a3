# near-miss: PTO023
"""The same running sum reading only what still holds the value: the output after the move, a
clone of the input, the first block used on one side of an if/else and moved on the other, and
a partial write (an assemble copies)."""
import pypto

BLOCK, COLS = 16, 64


@pypto.frontend.jit
def running_sum(
    x: pypto.Tensor([4 * BLOCK, COLS], pypto.DT_FP32),
    total: pypto.Tensor([BLOCK, COLS], pypto.DT_FP32),
    scaled: pypto.Tensor([BLOCK, COLS], pypto.DT_FP32),
    head: pypto.Tensor([BLOCK, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, COLS)
    head[:] = x[0:BLOCK, :]
    for b in pypto.loop(4, name="ACC", idx_name="b"):
        block = pypto.view(x, [BLOCK, COLS], [b * BLOCK, 0]) * 1.0
        if pypto.is_loop_begin(b):
            total[:] = block
        else:
            total[:] = total + block
    scaled[:] = total * 0.5
    scaled[:] = scaled + pypto.clone(x[0:BLOCK, :])
