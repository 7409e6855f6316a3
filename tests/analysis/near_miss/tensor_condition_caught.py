# caught: PTO022
"""Clamping written as Python control flow on tensors: the helper's `if` takes the pypto tensor
`x > limit` as true (a Tensor has no truth value of its own, so Python calls it true), and the
kernel wraps its loop-end test in pypto.cond, which 0.2.0's parser refuses in a jit body."""
import pypto

ROWS, COLS = 64, 128


def clamp_rows(x, limit, y):
    if x > limit:
        y[:] = limit + 0.0
    else:
        y[:] = x + 0.0


@pypto.frontend.jit
def clamp_kernel(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    limit: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, COLS)
    for step in pypto.loop(2, name="PASS", idx_name="step"):
        if pypto.cond(pypto.is_loop_end(step)):
            clamp_rows(x, limit, y)
