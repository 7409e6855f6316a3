# near-miss: PTO028
"""The same SwiGLU spelt with names pypto has: SiLU as g * sigmoid(g), the fused rms_norm on the
expert input, a named dynamic token count from pypto.frontend.dynamic (the router pads each
expert's batch to a multiple of 32 rows), and the DataType enum."""
import pypto

INTER = 512
TOKENS = pypto.frontend.dynamic("TOKENS")


@pypto.frontend.jit
def norm_swiglu(
    gate: pypto.Tensor([TOKENS, INTER], pypto.DataType.DT_FP32),
    up: pypto.Tensor([TOKENS, INTER], pypto.DT_FP32),
    gamma: pypto.Tensor([INTER], pypto.DT_FP32),
    act: pypto.Tensor([TOKENS, INTER], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, INTER)
    for t in pypto.loop(gate.shape[0] // 32, name="tokens", idx_name="t"):
        g = pypto.rms_norm(pypto.view(gate, [32, INTER], [t * 32, 0]), gamma, epsilon=1e-6)
        u = pypto.view(up, [32, INTER], [t * 32, 0])
        act[t * 32:(t + 1) * 32, :] = pypto.mul(pypto.mul(g, pypto.sigmoid(g)), u)
