"""Broadcasting: a (32, 1) column plus a (1, 64) row, a (1, 64) row against a full block, a 1-D bias."""
import pypto

R, C = 32, 64


@pypto.frontend.jit
def broadcast(
    col: pypto.Tensor((R, 1), pypto.DT_FP32),
    row: pypto.Tensor((1, C), pypto.DT_FP32),
    x: pypto.Tensor((R, C), pypto.DT_FP32),
    bias: pypto.Tensor((C,), pypto.DT_FP32),
    outer: pypto.Tensor((R, C), pypto.DT_FP32),
    mixed: pypto.Tensor((R, C), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, C)
    outer[:] = col + row
    mixed[:] = x * row - col + bias


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(3)
    return {"col": torch.randn(R, 1, generator=g), "row": torch.randn(1, C, generator=g),
            "x": torch.randn(R, C, generator=g), "bias": torch.randn(C, generator=g),
            "outer": torch.zeros(R, C), "mixed": torch.zeros(R, C)}


def reference(col, row, x, bias, outer, mixed):
    return {"outer": col + row, "mixed": x * row - col + bias}
