# near-miss: PTO022
"""The same clamp written the way pypto takes it: the element-wise choice with pypto.where, a
bare `if` on the loop flag in the jit body, pypto.cond where Python runs the code (a plain
helper), and build-time tests on shapes and an optional tensor."""
import pypto

ROWS, COLS = 64, 128


def first_pass(step, x, y):
    if pypto.cond(pypto.is_loop_begin(step)):
        y[:] = x * 1.0


@pypto.frontend.jit
def clamp_kernel(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    limit: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    bias=None,
):
    pypto.set_vec_tile_shapes(16, COLS)
    for step in pypto.loop(2, name="PASS", idx_name="step"):
        first_pass(step, x, y)
        if pypto.is_loop_end(step) and x.shape[0] == ROWS:
            y[:] = pypto.where(x > limit, limit, x)
    if bias is not None:
        y[:] = y + bias
