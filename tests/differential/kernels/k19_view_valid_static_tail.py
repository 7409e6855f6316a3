"""Static row count that is not a multiple of the block: the last block is ragged and
`valid_shape=[pypto.min(16, R - i*16), C]` limits what is read, computed and written."""
import pypto

R, C = 40, 64
BLOCK = 16
F32 = pypto.DT_FP32


@pypto.frontend.jit
def static_tail(
    x: pypto.Tensor((R, C), F32),
    y: pypto.Tensor((R, C), F32),
    rmax: pypto.Tensor((R, 1), F32),
):
    pypto.set_vec_tile_shapes(BLOCK, C)
    for i in pypto.loop((R + BLOCK - 1) // BLOCK, name="blocks", idx_name="i"):
        rows = pypto.min(BLOCK, R - i * BLOCK)
        blk = pypto.view(x, [BLOCK, C], [i * BLOCK, 0], valid_shape=[rows, C])
        pypto.assemble(pypto.relu(blk) - 1.0, [i * BLOCK, 0], y)
        pypto.assemble(pypto.amax(blk, -1, keepdim=True), [i * BLOCK, 0], rmax)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(19)
    return {"x": torch.randn(R, C, generator=g), "y": torch.zeros(R, C), "rmax": torch.zeros(R, 1)}


def reference(x, y, rmax):
    import torch

    return {"y": torch.relu(x) - 1.0, "rmax": x.amax(-1, keepdim=True)}
