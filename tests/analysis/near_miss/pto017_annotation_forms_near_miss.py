# near-miss: PTO017
"""Every annotation spelling pypto reads as a tensor, and scalar parameters used as scalars."""
import pypto

BLOCK = 16


@pypto.frontend.jit
def blend(
    a: pypto.Tensor[[64, 64], pypto.DT_FP16],
    b: pypto.Tensor([64, 64]),
    c: pypto.Tensor(),
    out: pypto.Tensor[...],
    alpha=0.25,
    starts=(0, 32),
):
    pypto.set_vec_tile_shapes(BLOCK, 64)
    for s in starts:
        mixed = a[s:s + 32, :] * alpha + b[s:s + 32, :]
        out[s:s + 32, :] = mixed - c[s:s + 32, :]
