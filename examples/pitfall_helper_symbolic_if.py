"""Causal block mask: blocks on the diagonal get a triangular mask, others are copied scaled.

Pitfall PTO014 (Python `if` on a symbolic value in a plain helper), line 22 in `_mask_block`:
the helper is an ordinary Python function, so pypto *executes* it during tracing instead of
parsing it; `if row_blk == col_blk:` then asks Python for the truth value of a SymbolicScalar
(the loop indices).  pypto 0.2.0 raises `ValueError: Not concrete value`.  Inside a plain helper
write `if pypto.cond(row_blk == col_blk):`, or make the helper a `@pypto.frontend.function`
(whose `if` is parsed and turned into a runtime branch).

Expected diagnostics:
    PTO014 line 22
"""
import pypto

N, BLK = 128, 32
F32 = pypto.DT_FP32


def _mask_block(scores, out, row_blk, col_blk):
    """Plain helper: write one masked, scaled score block into `out`."""
    blk = pypto.view(scores, [BLK, BLK], [row_blk * BLK, col_blk * BLK])
    if row_blk == col_blk:  # PTO014
        pypto.assemble(pypto.tril(blk) * 0.5, [row_blk * BLK, col_blk * BLK], out)
    else:
        pypto.assemble(blk * 0.5, [row_blk * BLK, col_blk * BLK], out)


@pypto.frontend.jit
def causal_scale(
    scores: pypto.Tensor((N, N), F32),
    out: pypto.Tensor((N, N), F32),
):
    pypto.set_vec_tile_shapes(BLK, BLK)
    for i in pypto.loop(N // BLK, name="q_blk", idx_name="i"):
        for j in pypto.loop(N // BLK, name="k_blk", idx_name="j"):
            _mask_block(scores, out, i, j)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(32)
    return {"scores": torch.randn(N, N, generator=g), "out": torch.zeros(N, N)}


def reference(scores, out):
    """Diagonal blocks: lower triangle within the block; off-diagonal blocks: the full block."""
    import torch

    expected = scores * 0.5
    for b in range(N // BLK):
        sl = slice(b * BLK, (b + 1) * BLK)
        expected[sl, sl] = torch.tril(scores[sl, sl]) * 0.5
    return {"out": expected}
