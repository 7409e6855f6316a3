# caught: PTO013
"""W8 weight dequantization of a whole 4096 x 4096 projection in one body with (16, 256) tiles:
the cast and the per-channel scale make about 20k tile operations in one subgraph."""
import pypto

OUT_F, IN_F = 4096, 4096


@pypto.frontend.jit
def dequant_weight(
    w_q: pypto.Tensor([OUT_F, IN_F], pypto.DT_INT8),
    scale: pypto.Tensor([1, IN_F], pypto.DT_FP16),
    w: pypto.Tensor([OUT_F, IN_F], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(16, 256)
    w[:] = pypto.mul(pypto.cast(w_q, pypto.DT_FP16), scale)
