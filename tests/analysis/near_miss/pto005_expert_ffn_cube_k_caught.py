# caught: PTO005
"""One MoE expert's up projection with SiLU: the K tiles are [96, 256], and an L1 tile that is
not a multiple of its L0 tile is rejected when the matmul is created."""
import pypto

TOKENS, HIDDEN, INTER = 128, 1024, 512


@pypto.frontend.jit
def expert_up_silu(
    tokens: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP16),
    w_up: pypto.Tensor([HIDDEN, INTER], pypto.DT_FP16),
    act: pypto.Tensor([TOKENS, INTER], pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([64, 128], [96, 256], [128, 256])
    pypto.set_vec_tile_shapes(32, INTER)
    up = pypto.matmul(tokens, w_up, pypto.DT_FP32)
    act[:] = pypto.mul(up, pypto.sigmoid(up))
