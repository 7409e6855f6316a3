# caught: PTO006
"""Per-sequence RMS scaling over a padded batch: each sequence's length is read from a tensor
and rounded up to 32-row blocks, but the block views carry no valid_shape, so the last block's
padding rows are scaled and written as if they were tokens."""
import pypto

B, MAX_S, D = 4, 256, 128
BLOCK = 32


@pypto.frontend.jit
def scale_sequences(
    x: pypto.Tensor([B * MAX_S, D], pypto.DT_FP32),
    seq_lens: pypto.Tensor([B], pypto.DT_INT32),
    gamma: pypto.Tensor([1, D], pypto.DT_FP32),
    y: pypto.Tensor([B * MAX_S, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, D)
    for b in pypto.loop(B, name="seqs", idx_name="b"):
        n = seq_lens[b]
        for j in pypto.loop((n + BLOCK - 1) // BLOCK, name="blocks", idx_name="j"):
            rows = pypto.view(x, [BLOCK, D], [b * MAX_S + j * BLOCK, 0])
            ms = pypto.mul(pypto.sum(pypto.mul(rows, rows), -1, keepdim=True), 1.0 / D)
            scaled = pypto.mul(pypto.mul(rows, pypto.rsqrt(pypto.add(ms, 1e-6))), gamma)
            pypto.assemble(scaled, [b * MAX_S + j * BLOCK, 0], y)
