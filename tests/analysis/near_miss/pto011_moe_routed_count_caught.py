# caught: PTO011
"""MoE expert scaling that skips capacity blocks past the routed token count read per expert:
the token-block loop is unrolled by [1, 2, 4, 8] around that data-dependent `if`."""
import pypto

EXPERTS, CAP, HIDDEN, BLOCK = 8, 256, 128, 32


@pypto.frontend.jit
def scale_routed(
    x: pypto.Tensor([EXPERTS * CAP, HIDDEN], pypto.DT_FP32),
    routed: pypto.Tensor([EXPERTS], pypto.DT_INT32),
    gate: pypto.Tensor([EXPERTS * CAP, 1], pypto.DT_FP32),
    y: pypto.Tensor([EXPERTS * CAP, HIDDEN], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, HIDDEN)
    for e in pypto.loop(EXPERTS, name="experts", idx_name="e"):
        n = routed[e]
        for t in pypto.loop(CAP // BLOCK, name="token_blocks", idx_name="t", unroll_list=[1, 2, 4, 8]):
            if t * BLOCK < n:
                row = e * CAP + t * BLOCK
                rows = pypto.view(x, [BLOCK, HIDDEN], [row, 0])
                w = pypto.view(gate, [BLOCK, 1], [row, 0])
                pypto.assemble(pypto.mul(rows, w), [row, 0], y)
