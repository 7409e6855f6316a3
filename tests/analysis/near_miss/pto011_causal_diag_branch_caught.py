# caught: PTO011
"""Causal prefill attention: the KV-block loop is unrolled by [1, 2, 4] and tests `j == i` to
mask the diagonal block; each unrolled copy carries its own cond, 2 + 4 + 16 = 22 paths."""
import pypto

S, D, BLOCK = 512, 128, 64
N_BLOCKS = S // BLOCK
SCALE = 0.088388


@pypto.frontend.jit
def causal_scores(
    q: pypto.Tensor([S, D], pypto.DT_FP16),
    k: pypto.Tensor([S, D], pypto.DT_FP16),
    diag_mask: pypto.Tensor([BLOCK, BLOCK], pypto.DT_FP32),
    scores: pypto.Tensor([S, S], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
    pypto.set_vec_tile_shapes(32, BLOCK)
    for i in pypto.loop(N_BLOCKS, name="q_blocks", idx_name="i"):
        q_blk = pypto.view(q, [BLOCK, D], [i * BLOCK, 0])
        for j in pypto.loop(i + 1, name="kv_blocks", idx_name="j", unroll_list=[1, 2, 4]):
            k_blk = pypto.view(k, [BLOCK, D], [j * BLOCK, 0])
            s = pypto.mul(pypto.matmul(q_blk, k_blk, pypto.DT_FP32, b_trans=True), SCALE)
            if j == i:
                pypto.assemble(pypto.add(s, diag_mask), [i * BLOCK, j * BLOCK], scores)
            else:
                pypto.assemble(s, [i * BLOCK, j * BLOCK], scores)
