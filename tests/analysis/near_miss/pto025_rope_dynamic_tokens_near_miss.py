# near-miss: PTO025
"""The same rotary scaling in 32-token blocks, the tail given its valid rows."""
import pypto

HEAD_DIM = 128
BLOCK = 32


@pypto.frontend.jit
def rope_scale(q: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32),
               cos: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(BLOCK, HEAD_DIM)
    tokens = q.shape[0]
    for b in pypto.loop((tokens + BLOCK - 1) // BLOCK, name="tok_blk", idx_name="b"):
        rows = pypto.min(BLOCK, tokens - b * BLOCK)
        qb = pypto.view(q, [BLOCK, HEAD_DIM], [b * BLOCK, 0], valid_shape=[rows, HEAD_DIM])
        cb = pypto.view(cos, [BLOCK, HEAD_DIM], [b * BLOCK, 0], valid_shape=[rows, HEAD_DIM])
        pypto.assemble(qb * cb, [b * BLOCK, 0], out)
