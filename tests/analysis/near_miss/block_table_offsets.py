# near-miss: PTO006
"""Values read from a tensor used as offsets (a block table) or handed to another op are applied."""
import pypto

B, BLOCKS, BS, D = 4, 8, 16, 64


@pypto.frontend.jit
def gather_blocks(
    kv: pypto.Tensor((BLOCKS * BS, D), pypto.DT_FP32),
    table: pypto.Tensor((B, BLOCKS), pypto.DT_INT32),
    info: pypto.Tensor((B, 3), pypto.DT_INT32),
    out: pypto.Tensor((B * BS, D), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BS, D)
    for b in pypto.loop(B, name="batch", idx_name="b"):
        block = table[b, 0]
        offset = info[b, 2]
        one_row = kv[b:b + 1, ...]
        pypto.distributed.shmem_put(one_row, [offset, 0], out, 0)
        part = pypto.view(kv, [BS, D], [block * BS, 0])
        out[b * BS:, :] = part + 1.0
