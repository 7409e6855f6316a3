"""A `@pypto.frontend.function` helper (inlined, writes its out parameter) called per block."""
import pypto

BLOCKS, R, C = 4, 16, 32
F32 = pypto.DT_FP32


@pypto.frontend.function
def bias_lrelu(x: pypto.Tensor((R, C), F32), b: pypto.Tensor((1, C), F32), out: pypto.Tensor((R, C), F32)):
    out[:] = pypto.lrelu(x + b, 0.2)


@pypto.frontend.jit
def blocks_epilogue(
    x: pypto.Tensor((BLOCKS * R, C), F32),
    b: pypto.Tensor((1, C), F32),
    y: pypto.Tensor((BLOCKS * R, C), F32),
):
    pypto.set_vec_tile_shapes(R, C)
    scratch = pypto.tensor([R, C], F32, "scratch")
    for i in pypto.loop(BLOCKS, name="blk", idx_name="i"):
        bias_lrelu(pypto.view(x, [R, C], [i * R, 0]), b, scratch)
        pypto.assemble(scratch * 2.0, [i * R, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(36)
    return {"x": torch.randn(BLOCKS * R, C, generator=g), "b": torch.randn(1, C, generator=g),
            "y": torch.zeros(BLOCKS * R, C)}


def reference(x, b, y):
    import torch.nn.functional as F

    return {"y": F.leaky_relu(x + b, 0.2) * 2.0}
