# near-miss: PTO015
"""unroll_list without 1 is fine when the build-time trip count splits into the factors:
256 rows in blocks of 16 are 16 blocks, 4 blocks of 4; a second loop's 10 blocks are 2 x 4 + 1 x 2."""
import pypto

BLOCK = 16


def halve(src, dst, blocks):
    for b in pypto.loop(blocks, name="halve", idx_name="h", unroll_list=[4, 2]):
        part = pypto.view(src, [BLOCK, 64], [b * BLOCK, 0])
        dst[b * BLOCK:(b + 1) * BLOCK, :] = pypto.mul(part, 0.5)


@pypto.frontend.jit
def two_passes(
    x: pypto.Tensor([256, 64], pypto.DT_FP32),
    y: pypto.Tensor([256, 64], pypto.DT_FP32),
    z: pypto.Tensor([160, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, 64)
    for b in pypto.loop(x.shape[0] // BLOCK, name="rows", idx_name="b", unroll_list=[4]):
        part = pypto.view(x, [BLOCK, 64], [b * BLOCK, 0])
        y[b * BLOCK:(b + 1) * BLOCK, :] = pypto.exp(part)
    halve(x, z, 10)
