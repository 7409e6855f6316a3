"""`pypto.loop_unroll(..., unroll_list=[4, 2])` over 7 blocks: the body is traced once per
factor f (4, 2 and the appended 1) and processes f blocks per iteration (view height BR*f)."""
import pypto

BLOCKS, BR, C = 7, 16, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def loop_unroll_factor(
    x: pypto.Tensor((BLOCKS * BR, C), F32),
    y: pypto.Tensor((BLOCKS * BR, C), F32),
    rowmax: pypto.Tensor((BLOCKS * BR, 1), F32),
):
    pypto.set_vec_tile_shapes(BR, C)
    for i, f in pypto.loop_unroll(0, BLOCKS, 1, name="blk", idx_name="b", unroll_list=[4, 2]):
        part = pypto.view(x, [BR * f, C], [i * BR, 0])
        pypto.assemble(part * 3.0 - 1.0, [i * BR, 0], y)
        pypto.assemble(pypto.amax(part, -1, keepdim=True), [i * BR, 0], rowmax)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(29)
    return {"x": torch.randn(BLOCKS * BR, C, generator=g), "y": torch.zeros(BLOCKS * BR, C),
            "rowmax": torch.zeros(BLOCKS * BR, 1)}


def reference(x, y, rowmax):
    return {"y": x * 3.0 - 1.0, "rowmax": x.amax(-1, keepdim=True)}
