# near-miss: PTO010
"""The same per-head scores with the unroll where the docs allow it, on the innermost pypto
loop; the Python range() splitting the 256-wide head dim into K chunks inside it is unrolled
at build time and is not a pypto loop."""
import pypto

HEADS, Q, D, BLOCK, N_BLOCKS = 8, 16, 256, 64, 8
K_CHUNK = 128
SCALE = 0.0625


@pypto.frontend.jit
def head_scores(
    q: pypto.Tensor([HEADS * Q, D], pypto.DT_FP16),
    k: pypto.Tensor([HEADS * N_BLOCKS * BLOCK, D], pypto.DT_FP16),
    scores: pypto.Tensor([HEADS * Q, N_BLOCKS * BLOCK], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([16, 16], [64, 128], [64, 64])
    pypto.set_vec_tile_shapes(Q, BLOCK)
    for h in pypto.loop(HEADS, name="heads", idx_name="h"):
        for j in pypto.loop(N_BLOCKS, name="kv_blocks", idx_name="j", unroll_list=[1, 2, 4]):
            row = (h * N_BLOCKS + j) * BLOCK
            for c in range(D // K_CHUNK):
                q_c = pypto.view(q, [Q, K_CHUNK], [h * Q, c * K_CHUNK])
                k_c = pypto.view(k, [BLOCK, K_CHUNK], [row, c * K_CHUNK])
                part = pypto.matmul(q_c, k_c, pypto.DT_FP32, b_trans=True)
                if c == 0:
                    s = part
                else:
                    s = pypto.add(s, part)
            pypto.assemble(pypto.mul(s, SCALE), [h * Q, j * BLOCK], scores)
