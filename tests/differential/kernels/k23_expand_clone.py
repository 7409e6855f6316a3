"""expand_clone: broadcast a (1, C) row and a (R, 1) column to (R, C) explicitly."""
import pypto

R, C = 32, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def expand_ops(
    row: pypto.Tensor((1, C), F32),
    col: pypto.Tensor((R, 1), F32),
    x: pypto.Tensor((R, C), F32),
    out: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(32, 64)
    rows = pypto.expand_clone(row, [R, C])
    cols = pypto.expand_clone(col, [R, C])
    out[:] = rows * x + cols


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(23)
    return {"row": torch.randn(1, C, generator=g), "col": torch.randn(R, 1, generator=g),
            "x": torch.randn(R, C, generator=g), "out": torch.zeros(R, C)}


def reference(row, col, x, out):
    return {"out": row.expand(R, C) * x + col.expand(R, C)}
