# caught: PTO015
"""A block loop over a DYNAMIC row count unrolled by 4 with no factor 1: the last blocks of a
count that is not a multiple of 4 get no loop of their own."""
import pypto

BLOCK = 16


@pypto.frontend.jit
def scale_rows(
    x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, 128)
    blocks = (x.shape[0] + BLOCK - 1) // BLOCK
    for b in pypto.loop(blocks, name="rows", idx_name="b", unroll_list=[4]):
        part = pypto.view(x, [BLOCK, 128], [b * BLOCK, 0])
        y[b * BLOCK:(b + 1) * BLOCK, :] = pypto.mul(part, 0.5)
