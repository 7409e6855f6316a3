# near-miss: PTO009
"""Nested loops may both use `_` when their idx_names differ: the variable is never read."""
import pypto


def test_nested_underscore():
    a = pypto.tensor([64, 64], pypto.DT_FP32, "a")
    b = pypto.tensor([64, 64], pypto.DT_FP32, "b")
    with pypto.function("NESTED", a, b):
        for _ in pypto.loop(1, name="b0", idx_name="bidx"):
            for _ in pypto.loop(1, name="s0", idx_name="sidx"):
                pypto.set_vec_tile_shapes(32, 64)
                b.move(pypto.exp(a))
