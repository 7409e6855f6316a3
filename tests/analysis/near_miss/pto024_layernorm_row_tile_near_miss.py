# near-miss: PTO024
"""The same LayerNorm with 8-row tiles (128 KiB per fp32 tile), and a cube tile over a small
matrix whose L1 values are larger than the matrix (they hold the matrix only)."""
import pypto

TOKENS, HIDDEN = 2048, 4096
EPS = 1e-5


@pypto.frontend.jit
def layer_norm(x: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32), gamma: pypto.Tensor([1, HIDDEN], pypto.DT_FP32),
               y: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, HIDDEN)
    for t in pypto.loop(TOKENS // 8, name="tok", idx_name="t"):
        rows = pypto.view(x, [8, HIDDEN], [t * 8, 0])
        mean = pypto.sum(rows, -1, keepdim=True) * (1.0 / HIDDEN)
        centred = rows - mean
        var = pypto.sum(centred * centred, -1, keepdim=True) * (1.0 / HIDDEN)
        pypto.assemble(centred * pypto.rsqrt(var + EPS) * gamma, [t * 8, 0], y)


@pypto.frontend.jit
def head_proj(p: pypto.Tensor([64, 512], pypto.DT_BF16), v: pypto.Tensor([512, 64], pypto.DT_BF16),
              o: pypto.Tensor([64, 64], pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([128, 512], [256, 512], [64, 64])
    o[:] = pypto.matmul(p, v, pypto.DT_BF16)
