# caught: PTO028
"""A MoE expert's SwiGLU written with torch's name for the gate activation: neither pypto 0.2.0
nor the later repository has pypto.silu, and the AttributeError waits for the first trace."""
import pypto

TOKENS, INTER = 128, 512


@pypto.frontend.jit
def swiglu(
    gate: pypto.Tensor([TOKENS, INTER], pypto.DT_FP32),
    up: pypto.Tensor([TOKENS, INTER], pypto.DT_FP32),
    act: pypto.Tensor([TOKENS, INTER], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, INTER)
    for t in pypto.loop(TOKENS // 32, name="tokens", idx_name="t"):
        g = pypto.view(gate, [32, INTER], [t * 32, 0])
        u = pypto.view(up, [32, INTER], [t * 32, 0])
        act[t * 32:(t + 1) * 32, :] = pypto.mul(pypto.silu(g), u)
