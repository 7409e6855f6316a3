"""A 2-D grid of blocks with nested loops (distinct idx_names): pypto.view + pypto.assemble,
and the same through slice syntax `x[i*16:(i+1)*16, ...]` on both sides."""
import pypto

R, C = 64, 128
BR, BC = 16, 32
F32 = pypto.DT_FP32


@pypto.frontend.jit
def view_grid(
    x: pypto.Tensor((R, C), F32),
    bias: pypto.Tensor((1, C), F32),
    a: pypto.Tensor((R, C), F32),
    b: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(BR, BC)
    for i in pypto.loop(R // BR, name="rows", idx_name="i"):
        for j in pypto.loop(C // BC, name="cols", idx_name="j"):
            blk = pypto.view(x, [BR, BC], [i * BR, j * BC])
            bb = pypto.view(bias, [1, BC], [0, j * BC])
            pypto.assemble(blk * 2.0 + bb, [i * BR, j * BC], a)
            b[i * BR:(i + 1) * BR, j * BC:(j + 1) * BC] = pypto.exp(x[i * BR:(i + 1) * BR, j * BC:(j + 1) * BC])


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(18)
    return {"x": torch.randn(R, C, generator=g), "bias": torch.randn(1, C, generator=g),
            "a": torch.zeros(R, C), "b": torch.zeros(R, C)}


def reference(x, bias, a, b):
    import torch

    return {"a": x * 2.0 + bias, "b": torch.exp(x)}
