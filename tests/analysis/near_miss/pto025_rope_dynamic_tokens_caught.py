# caught: PTO025
"""Rotary scaling over a token axis the call decides, applied to the whole tensor at once."""
import pypto

HEAD_DIM = 128


@pypto.frontend.jit
def rope_scale(q: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32),
               cos: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, HEAD_DIM)
    out[:] = q * cos
