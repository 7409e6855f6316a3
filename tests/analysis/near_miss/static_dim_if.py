# near-miss: PTO014
"""A STATIC dim is a plain int at build time: `if d == 512` picks a tile, it is not a cond."""
import pypto


@pypto.frontend.jit
def pick_tile(
    x: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP16),
    out: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP16),
):
    d = x.shape[1]
    if d == 512:
        pypto.set_vec_tile_shapes(8, 512)
    else:
        pypto.set_vec_tile_shapes(16, 256)
    out[:] = pypto.exp(x)
