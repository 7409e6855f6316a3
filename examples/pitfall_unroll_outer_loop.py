"""Blocked residual add over a 256x256 matrix with an outer row loop and an inner column loop.

Pitfall PTO010 (unroll_list on a loop that contains another loop), line 25 in
`blocked_residual`: `unroll_list=[2]` sits on the *outer* loop.  Only the innermost loop should
be unrolled; unrolling the outer one duplicates the whole inner loop in the graph.  pypto
0.2.0 accepts it silently (`TENSOR_rows_Unroll2` with the inner loop emitted twice).  Move the
unroll to the inner `cols` loop.

Expected diagnostics:
    PTO010 line 25
"""
import pypto

N = 256
BLK = 64


@pypto.frontend.jit
def blocked_residual(
    x: pypto.Tensor((N, N), pypto.DT_FP32),
    res: pypto.Tensor((N, N), pypto.DT_FP32),
    out: pypto.Tensor((N, N), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLK, BLK)
    for r in pypto.loop(N // BLK, name="rows", idx_name="r", unroll_list=[2]):  # PTO010
        for c in pypto.loop(N // BLK, name="cols", idx_name="c"):
            a = pypto.view(x, [BLK, BLK], [r * BLK, c * BLK])
            b = pypto.view(res, [BLK, BLK], [r * BLK, c * BLK])
            pypto.assemble(a + b, [r * BLK, c * BLK], out)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(29)
    return {
        "x": torch.randn(N, N, generator=g),
        "res": torch.randn(N, N, generator=g),
        "out": torch.zeros(N, N),
    }


def reference(x, res, out):
    return {"out": x + res}
