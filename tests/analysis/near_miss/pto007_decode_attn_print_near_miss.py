# near-miss: PTO007
"""The same decode attention with its diagnostics where they belong: a build-time print of the
configuration before the loop, and pass_verify_print (a device-side print op) inside it."""
import pypto

HEADS, D, BLOCK, N_BLOCKS = 16, 128, 64, 8
SCALE = 0.088388


@pypto.frontend.jit
def decode_scores(
    q: pypto.Tensor([HEADS, D], pypto.DT_FP16),
    k_cache: pypto.Tensor([N_BLOCKS * BLOCK, D], pypto.DT_FP16),
    scores: pypto.Tensor([HEADS, N_BLOCKS * BLOCK], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([16, 16], [64, 128], [64, 64])
    pypto.set_vec_tile_shapes(HEADS, BLOCK)
    print("decode_scores: heads", HEADS, "blocks", N_BLOCKS, "block size", BLOCK)
    for j in pypto.loop(N_BLOCKS, name="kv_blocks", idx_name="j"):
        k_blk = pypto.view(k_cache, [BLOCK, D], [j * BLOCK, 0])
        s = pypto.matmul(q, k_blk, pypto.DT_FP32, b_trans=True)
        pypto.pass_verify_print(s, cond=1)
        pypto.assemble(pypto.mul(s, SCALE), [0, j * BLOCK], scores)
