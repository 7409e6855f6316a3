# near-miss: PTO016
"""Moves that do copy on 0.2.0: a slice of an input (a view op), an explicit clone, an assemble."""
import pypto

ROWS, COLS = 64, 128


def first_block(x):
    return x[0:16, :]


@pypto.frontend.jit
def head_rows(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    head: pypto.Tensor([16, COLS], pypto.DT_FP32),
    whole: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    tail: pypto.Tensor([16, COLS], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, COLS)
    head[:] = first_block(x)
    whole.move(pypto.clone(x))
    pypto.assemble(x[48:64, :], [0, 0], tail)
