# near-miss: PTO001
"""The same residual RMSNorm written correctly: the bf16 input is rebound to its fp32 cast (an
input read before it is rebound, not an output), and the result is written with `y[:] =`."""
import pypto

TOKENS, HIDDEN = 64, 512
EPS = 1e-6


@pypto.frontend.jit
def add_rms_norm(
    x: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_BF16),
    residual: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32),
    gamma: pypto.Tensor([1, HIDDEN], pypto.DT_FP32),
    y: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32),
    residual_out: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, HIDDEN)
    x = pypto.cast(x, pypto.DT_FP32)
    hidden = pypto.add(x, residual)
    residual_out[:] = hidden
    mean_sq = pypto.mul(pypto.sum(pypto.mul(hidden, hidden), -1, keepdim=True), 1.0 / HIDDEN)
    inv_rms = pypto.rsqrt(pypto.add(mean_sq, EPS))
    y[:] = pypto.mul(pypto.mul(hidden, inv_rms), gamma)
