# caught: PTO018
"""A rope-style kernel that keeps the 3-D tile of its transposes for the 2-D scaling after them:
0.2.0 tiles the (T, 128) result by (2, 32), not by the (32, 128) the author wrote last."""
import pypto

T, D = 64, 128


@pypto.frontend.jit
def rotate_and_scale(
    x: pypto.Tensor((T, D), pypto.DT_FP32),
    scale: pypto.Tensor((T, D), pypto.DT_FP32),
    out: pypto.Tensor((T, D), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(2, 32, 128)
    pairs = pypto.reshape(x, [T, D // 2, 2])
    swapped = pypto.transpose(pairs, 1, 2)
    back = pypto.reshape(swapped, [T, D])
    out[:] = back * scale
