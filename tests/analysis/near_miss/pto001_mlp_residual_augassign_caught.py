# caught: PTO001
"""MLP block output plus residual: the activation is stored, then the residual is added with
`out += residual`; on a name that is `out = out + residual`, a rebinding, so the caller's
tensor holds the activation without the residual."""
import pypto

TOKENS, HIDDEN, INTER = 64, 256, 512


@pypto.frontend.jit
def mlp_down_residual(
    act: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
    w_down: pypto.Tensor([INTER, HIDDEN], pypto.DT_FP16),
    residual: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32),
    out: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([64, 64], [128, 256], [128, 256])
    pypto.set_vec_tile_shapes(16, HIDDEN)
    out[:] = pypto.matmul(act, w_down, pypto.DT_FP32)
    out += residual
