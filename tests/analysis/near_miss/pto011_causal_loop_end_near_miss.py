# near-miss: PTO011
"""The same causal scores: the KV loop runs to the diagonal, so the diagonal block is the loop's
last iteration and is_loop_end(j) marks it in two paths whatever the unroll; the `if CAUSAL`
on a module constant is decided at build time."""
import pypto

S, D, BLOCK = 512, 128, 64
N_BLOCKS = S // BLOCK
SCALE = 0.088388
CAUSAL = True


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
            if CAUSAL:
                if pypto.is_loop_end(j):
                    pypto.assemble(pypto.add(s, diag_mask), [i * BLOCK, j * BLOCK], scores)
                else:
                    pypto.assemble(s, [i * BLOCK, j * BLOCK], scores)
            else:
                pypto.assemble(s, [i * BLOCK, j * BLOCK], scores)
