# near-miss: PTO027
"""The same residual add with its casts: the fp16 input widened before the add, the result
narrowed before the store, a Python scalar (which takes the tensor's dtype), pypto.full for the
constant, and a placeholder tensor bound by a move."""
import pypto

ROWS, COLS = 32, 128


@pypto.frontend.jit
def residual_add(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    acc: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    y: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(16, COLS)
    half = pypto.full([ROWS, COLS], 0.5, pypto.DT_FP32)
    total = acc + pypto.cast(x, pypto.DT_FP32)
    scaled = pypto.tensor()
    scaled.move(pypto.cast(total * half, pypto.DT_FP16))
    y[:] = scaled * 1.0
