"""A `pypto.tensor` local used as scratch between two loops: the first loop writes every
block of it, the second reads it back shifted by one block."""
import pypto

BLOCKS, R, C = 4, 16, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def local_scratch(
    x: pypto.Tensor((BLOCKS * R, C), F32),
    y: pypto.Tensor((BLOCKS * R, C), F32),
):
    pypto.set_vec_tile_shapes(R, C)
    tmp = pypto.tensor([BLOCKS * R, C], F32, "tmp")
    for i in pypto.loop(BLOCKS, name="fill", idx_name="i"):
        pypto.assemble(pypto.exp(pypto.view(x, [R, C], [i * R, 0])), [i * R, 0], tmp)
    for j in pypto.loop(BLOCKS, name="use", idx_name="j"):
        src = pypto.view(tmp, [R, C], [((j + 1) % BLOCKS) * R, 0])
        pypto.assemble(src - pypto.view(x, [R, C], [j * R, 0]), [j * R, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(35)
    return {"x": torch.randn(BLOCKS * R, C, generator=g), "y": torch.zeros(BLOCKS * R, C)}


def reference(x, y):
    import torch

    e = torch.exp(x).reshape(BLOCKS, R, C).roll(-1, 0).reshape(BLOCKS * R, C)
    return {"y": e - x}
