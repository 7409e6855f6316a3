"""Scaled residual with saturation to a fixed range, fp16 end to end (narrow column tiles)."""

import torch

import pypto

ROWS, COLS = 1024, 512
RB = 64
CB = 16  # 16 x fp16 = 32 bytes
LIMIT = 60000.0


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def clamp_residual(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    res: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    out: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    alpha: float = 0.5,
):
    pypto.set_vec_tile_shapes(RB, CB)
    print("clamp_residual: tile", RB, "x", CB, "alpha", alpha)
    for r in pypto.loop(ROWS // RB, name="rows", idx_name="r"):
        xb = pypto.view(x, [RB, COLS], [r * RB, 0])
        rb = pypto.view(res, [RB, COLS], [r * RB, 0])
        mixed = pypto.add(rb, xb, alpha=alpha)
        clipped = pypto.clip(mixed, min=-LIMIT, max=LIMIT)
        pypto.assemble(clipped, [r * RB, 0], out)


def test_clamp_residual():
    for alpha in (0.5, 1.0):
        x = torch.randn(ROWS, COLS, dtype=torch.float16)
        res = torch.randn(ROWS, COLS, dtype=torch.float16)
        out = torch.zeros(ROWS, COLS, dtype=torch.float16)
        clamp_residual(x, res, out, alpha)
        ref = torch.clamp(res + alpha * x, -LIMIT, LIMIT)
        print("alpha", alpha, "shape", tuple(ref.shape))
        assert out.shape == ref.shape


if __name__ == "__main__":
    test_clamp_residual()
