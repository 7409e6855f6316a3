# caught: PTO008
"""Flash-attention style accumulation over KV blocks: the running output `acc` is declared with
pypto.tensor and updated as `acc + p @ v` from the first block on, so block 0 reads memory
nothing has written."""
import pypto

Q, D, BLOCK, N_BLOCKS = 64, 128, 64, 4


@pypto.frontend.jit
def attend_blocks(
    probs: pypto.Tensor([Q, N_BLOCKS * BLOCK], pypto.DT_FP16),
    v_cache: pypto.Tensor([N_BLOCKS * BLOCK, D], pypto.DT_FP16),
    out: pypto.Tensor([Q, D], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [128, 128])
    pypto.set_vec_tile_shapes(32, D)
    acc = pypto.tensor([Q, D], pypto.DT_FP32, "acc")
    for j in pypto.loop(N_BLOCKS, name="kv_blocks", idx_name="j"):
        p_blk = pypto.view(probs, [Q, BLOCK], [0, j * BLOCK])
        v_blk = pypto.view(v_cache, [BLOCK, D], [j * BLOCK, 0])
        acc[:] = pypto.add(acc, pypto.matmul(p_blk, v_blk, pypto.DT_FP32))
    out[:] = pypto.mul(acc, 1.0)
