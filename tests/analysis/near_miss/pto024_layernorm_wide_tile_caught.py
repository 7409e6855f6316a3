# caught: PTO024
"""LayerNorm over 4096-wide rows with a 64-row tile: one fp32 tile of the input is 1 MiB."""
import pypto

TOKENS, HIDDEN = 2048, 4096
EPS = 1e-5


@pypto.frontend.jit
def layer_norm(x: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32), gamma: pypto.Tensor([1, HIDDEN], pypto.DT_FP32),
               beta: pypto.Tensor([1, HIDDEN], pypto.DT_FP32), y: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, HIDDEN)
    for t in pypto.loop(TOKENS // 64, name="tok", idx_name="t"):
        rows = pypto.view(x, [64, HIDDEN], [t * 64, 0])
        mean = pypto.sum(rows, -1, keepdim=True) * (1.0 / HIDDEN)
        centred = rows - mean
        var = pypto.sum(centred * centred, -1, keepdim=True) * (1.0 / HIDDEN)
        normed = centred * pypto.rsqrt(var + EPS)
        pypto.assemble(normed * gamma + beta, [t * 64, 0], y)
