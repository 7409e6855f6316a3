# caught: PTO004
"""Not a near miss: a legacy body in a test function is checked like module-level code."""
import pypto


def test_row_sum():
    a = pypto.tensor([64, 64], pypto.DT_FP32, "a")
    out = pypto.tensor([64, 1], pypto.DT_FP32, "out")
    with pypto.function("ROW_SUM", a, out):
        for _ in pypto.loop(1, name="l", idx_name="i"):
            pypto.set_vec_tile_shapes(4, 4)
            out.move(pypto.sum(a, -1, keepdim=True))
