# near-miss: PTO008
"""The flash-style accumulation with the first KV block guarded: is_loop_begin(j) writes `acc`
from P @ V, later blocks read what the earlier ones wrote."""
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
        pv = pypto.matmul(p_blk, v_blk, pypto.DT_FP32)
        if pypto.is_loop_begin(j):
            acc[:] = pv
        else:
            acc[:] = pypto.add(acc, pv)
    out[:] = pypto.mul(acc, 1.0)
