# near-miss: PTO018
"""Extra tile dims that tile the result the same either way, and a reduction's tile kept at
the rank of its input while keepdim=False drops a dim from the result."""
import pypto

ROWS, COLS = 256, 256


@pypto.frontend.jit
def row_stats(
    x: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
    flat: pypto.Tensor((1, 1, 4096), pypto.DT_FP32),
    y: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
    flat_out: pypto.Tensor((1, 1, 4096), pypto.DT_FP32),
    row_max: pypto.Tensor((ROWS,), pypto.DT_FP32),
):
    for _ in pypto.loop(1, name="stats", idx_name="s"):
        pypto.set_vec_tile_shapes(128, 128, 128)  # leading (128, 128) == trailing (128, 128)
        y[:] = pypto.exp(x)
        pypto.set_vec_tile_shapes(1, 1, 64, 64)  # clipped to (1, 1, 4096): (1, 1, 64) either way
        flat_out[:] = flat * 2.0
        pypto.set_vec_tile_shapes(8, 256)
        m = pypto.amax(x, -1)  # the 2-D tile serves the 2-D input
        pypto.set_vec_tile_shapes(256)
        row_max[:] = m + 0.0
