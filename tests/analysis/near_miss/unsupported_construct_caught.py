# caught: PTO021
"""A block-wise accumulation written with the Python an author would write on the host: a
`while` over the blocks and a list of per-block scales read with the loop index. pypto's parser
has no visitor for `while`, and a symbolic index cannot pick a list element."""
import pypto

BLOCK = 32


@pypto.frontend.jit
def scaled_blocks(
    x: pypto.Tensor([128, 64], pypto.DT_FP32),
    y: pypto.Tensor([BLOCK, 64], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, 64)
    weights = [0.5, 0.25, 0.125, 0.125]
    y[:] = pypto.view(x, [BLOCK, 64], [0, 0]) * weights[0]
    blk = 1
    while blk < 4:
        part = pypto.view(x, [BLOCK, 64], [blk * BLOCK, 0])
        y[:] = y + part * weights[blk]
        blk += 1
    for b in pypto.loop(4, name="SCALE", idx_name="b"):
        part = pypto.view(x, [BLOCK, 64], [b * BLOCK, 0])
        y[:] = y + part * weights[b]
