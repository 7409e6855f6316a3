# near-miss: PTO013
"""The same dequantization as the tiling guide asks: a loop over 1024-row slabs, so one body
holds a quarter of the tiles (about 5k tile operations), well under the budget."""
import pypto

OUT_F, IN_F = 4096, 4096
SLAB = 1024


@pypto.frontend.jit
def dequant_weight(
    w_q: pypto.Tensor([OUT_F, IN_F], pypto.DT_INT8),
    scale: pypto.Tensor([1, IN_F], pypto.DT_FP16),
    w: pypto.Tensor([OUT_F, IN_F], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(16, 256)
    for r in pypto.loop(OUT_F // SLAB, name="slabs", idx_name="r"):
        slab = pypto.view(w_q, [SLAB, IN_F], [r * SLAB, 0])
        w[r * SLAB:(r + 1) * SLAB, :] = pypto.mul(pypto.cast(slab, pypto.DT_FP16), scale)
