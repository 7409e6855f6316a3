"""`pypto.loop(..., unroll_list=[4, 1])` over 11 blocks: two 4-way unrolled iterations
(body traced for i, i+1, i+2, i+3) then a 3-iteration tail loop."""
import pypto

BLOCKS, BR, C = 11, 8, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def unroll_4_1(
    x: pypto.Tensor((BLOCKS * BR, C), F32),
    w: pypto.Tensor((1, C), F32),
    y: pypto.Tensor((BLOCKS * BR, C), F32),
):
    pypto.set_vec_tile_shapes(BR, C)
    for i in pypto.loop(BLOCKS, name="blk", idx_name="i", unroll_list=[4, 1]):
        blk = pypto.view(x, [BR, C], [i * BR, 0])
        pypto.assemble(blk * w + 1.0, [i * BR, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(27)
    return {"x": torch.randn(BLOCKS * BR, C, generator=g), "w": torch.randn(1, C, generator=g),
            "y": torch.zeros(BLOCKS * BR, C)}


def reference(x, w, y):
    return {"y": x * w + 1.0}
