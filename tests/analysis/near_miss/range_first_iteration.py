# near-miss: PTO008
"""A Python range() loop unrolls at build time: iteration 0 produces what the others read."""
import pypto

Q, D, BLOCKS = 32, 64, 4


@pypto.frontend.jit
def online_sum(kv: pypto.Tensor((BLOCKS * Q, D), pypto.DT_FP32), out: pypto.Tensor((Q, D), pypto.DT_FP32),
               n_blocks: int):
    pypto.set_vec_tile_shapes(Q, D)
    for _ in pypto.loop(1, name="head", idx_name="h"):
        acc = pypto.tensor([Q, D], pypto.DT_FP32, "acc")
        for blk in range(n_blocks):
            part = pypto.view(kv, [Q, D], [blk * Q, 0])
            if blk == 0:
                acc = part * 1.0
            else:
                acc = acc + part
        out[:] = acc
