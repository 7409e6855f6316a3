"""Nested loops, only the inner one unrolled ([2, 1] over 3 column blocks), with a branch on
`pypto.is_loop_begin(j)` of the inner index: row-wise prefix maxima over column blocks."""
import pypto

RB, CB = 2, 3
R, C = 16, 32
F32 = pypto.DT_FP32


@pypto.frontend.jit
def nested_inner_unroll(
    x: pypto.Tensor((RB * R, CB * C), F32),
    y: pypto.Tensor((RB * R, CB * C), F32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(RB, name="rows", idx_name="i"):
        for j in pypto.loop(CB, name="cols", idx_name="j", unroll_list=[2, 1]):
            blk = pypto.view(x, [R, C], [i * R, j * C])
            if pypto.is_loop_begin(j):
                pypto.assemble(blk * 1.0, [i * R, 0], y)
            else:
                prev = pypto.view(y, [R, C], [i * R, (j - 1) * C])
                pypto.assemble(pypto.maximum(prev, blk), [i * R, j * C], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(38)
    return {"x": torch.randn(RB * R, CB * C, generator=g), "y": torch.zeros(RB * R, CB * C)}


def reference(x, y):
    import torch

    blocks = list(x.split(C, dim=1))
    out = [blocks[0]]
    for b in blocks[1:]:
        out.append(torch.maximum(out[-1], b))
    return {"y": torch.cat(out, 1)}
