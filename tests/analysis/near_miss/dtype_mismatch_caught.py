# caught: PTO027
"""A half-precision residual add that forgets the casts: the fp32 accumulator meets the fp16
input in one add (0.2.0 refuses mixed dtypes), the fp32 result is stored into the fp16 output
(no implicit cast), and a constant is made with pypto.tensor(value, dtype), whose first
argument is the shape."""
import pypto

ROWS, COLS = 32, 128


@pypto.frontend.jit
def residual_add(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    acc: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    y: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(16, COLS)
    half = pypto.tensor(0.5, pypto.DT_FP32)
    total = acc + x
    y[:] = total * 0.5
