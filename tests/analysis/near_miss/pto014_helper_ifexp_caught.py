# caught: PTO014
"""ALiBi-style block bias: a plain helper picks the slope with a conditional expression on the
KV-block index; pypto executes helpers, so `a if j == 0 else b` calls bool() on a symbol."""
import pypto

Q, BLOCK, N_BLOCKS = 32, 64, 8


def block_slope(j):
    return 0.0 if j == 0 else -0.125


@pypto.frontend.jit
def biased_scores(
    scores: pypto.Tensor([Q, N_BLOCKS * BLOCK], pypto.DT_FP32),
    out: pypto.Tensor([Q, N_BLOCKS * BLOCK], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(Q, BLOCK)
    for j in pypto.loop(N_BLOCKS, name="kv_blocks", idx_name="j"):
        s = pypto.view(scores, [Q, BLOCK], [0, j * BLOCK])
        pypto.assemble(pypto.add(s, block_slope(j)), [0, j * BLOCK], out)
