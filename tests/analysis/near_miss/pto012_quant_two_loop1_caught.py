# caught: PTO012
"""Per-token int8 quantization split into two loop(1) phases, scales then values: pypto 0.2.0
never merges them, so the kernel pays two control loops and two submissions."""
import pypto

TOKENS, HIDDEN = 64, 1024


@pypto.frontend.jit
def quantize_per_token(
    x: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP16),
    q: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_INT8),
    scale: pypto.Tensor([TOKENS, 1], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(8, HIDDEN)
    for _ in pypto.loop(1, name="scales", idx_name="s"):
        absmax = pypto.amax(pypto.abs(x), -1, keepdim=True)
        scale[:] = pypto.mul(absmax, 1.0 / 127.0)
    for _ in pypto.loop(1, name="values", idx_name="v"):
        scaled = pypto.round(pypto.div(x, scale))
        q[:] = pypto.cast(scaled, pypto.DT_INT8)
