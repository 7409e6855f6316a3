# near-miss: PTO012
"""Two loop(1) regions kept apart on purpose: the first sets its own tile shape."""
import pypto


@pypto.frontend.jit
def scoped(a: pypto.Tensor((64, 64), pypto.DT_FP32), b: pypto.Tensor((64, 64), pypto.DT_FP32),
           result: pypto.Tensor((64, 64), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, 64)
    for _ in pypto.loop(1, name="s0", idx_name="k"):
        pypto.set_vec_tile_shapes(32, 32)
        result.move(a + b)
    for _ in pypto.loop(1, name="s0", idx_name="k"):
        result.move(result + b)
