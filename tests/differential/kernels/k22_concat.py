"""concat along rows (two inputs) and along columns (three inputs)."""
import pypto

R, C = 16, 32
F32 = pypto.DT_FP32


@pypto.frontend.jit
def concat_ops(
    a: pypto.Tensor((R, C), F32),
    b: pypto.Tensor((R, C), F32),
    c: pypto.Tensor((R, C), F32),
    rows: pypto.Tensor((2 * R, C), F32),
    cols: pypto.Tensor((R, 3 * C), F32),
):
    pypto.set_vec_tile_shapes(16, 32)
    rows[:] = pypto.concat([a, b * 2.0], dim=0)
    pypto.set_vec_tile_shapes(16, 96)
    cols[:] = pypto.concat([a, b, c + 1.0], 1)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(22)
    return {"a": torch.randn(R, C, generator=g), "b": torch.randn(R, C, generator=g),
            "c": torch.randn(R, C, generator=g), "rows": torch.zeros(2 * R, C), "cols": torch.zeros(R, 3 * C)}


def reference(a, b, c, rows, cols):
    import torch

    return {"rows": torch.cat([a, b * 2.0], 0), "cols": torch.cat([a, b, c + 1.0], 1)}
