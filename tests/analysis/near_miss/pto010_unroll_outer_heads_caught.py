# caught: PTO010
"""Per-head KV-block scores with the unroll on the head loop: the whole body, inner block loop
included, is duplicated per unrolled copy instead of merging the small block computations."""
import pypto

HEADS, Q, D, BLOCK, N_BLOCKS = 8, 16, 128, 64, 8
SCALE = 0.088388


@pypto.frontend.jit
def head_scores(
    q: pypto.Tensor([HEADS * Q, D], pypto.DT_FP16),
    k: pypto.Tensor([HEADS * N_BLOCKS * BLOCK, D], pypto.DT_FP16),
    scores: pypto.Tensor([HEADS * Q, N_BLOCKS * BLOCK], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([16, 16], [64, 128], [64, 64])
    pypto.set_vec_tile_shapes(Q, BLOCK)
    for h in pypto.loop(HEADS, name="heads", idx_name="h", unroll_list=[1, 2, 4]):
        q_h = pypto.view(q, [Q, D], [h * Q, 0])
        for j in pypto.loop(N_BLOCKS, name="kv_blocks", idx_name="j"):
            k_blk = pypto.view(k, [BLOCK, D], [(h * N_BLOCKS + j) * BLOCK, 0])
            s = pypto.matmul(q_h, k_blk, pypto.DT_FP32, b_trans=True)
            pypto.assemble(pypto.mul(s, SCALE), [h * Q, j * BLOCK], scores)
