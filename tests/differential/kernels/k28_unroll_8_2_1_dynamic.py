"""`unroll_list=[8, 2, 1]` over DYNAMIC rows: 147 rows = 19 blocks of 8 (the last holds 3 rows),
so the 8-way, 2-way and 1-way loops all run and the ragged block falls in the tail."""
import pypto

C = 32
BR = 8
F32 = pypto.DT_FP32


@pypto.frontend.jit
def unroll_8_2_1(
    x: pypto.Tensor([pypto.DYNAMIC, C], F32),
    y: pypto.Tensor([pypto.DYNAMIC, C], F32),
    s: pypto.Tensor([pypto.DYNAMIC, 1], F32),
):
    pypto.set_vec_tile_shapes(BR, C)
    n = x.shape[0]
    for i in pypto.loop((n + BR - 1) // BR, name="rows", idx_name="i", unroll_list=[8, 2, 1]):
        rows = pypto.min(BR, n - i * BR)
        blk = pypto.view(x, [BR, C], [i * BR, 0], valid_shape=[rows, C])
        pypto.assemble(pypto.sqrt(pypto.abs(blk)) - blk, [i * BR, 0], y)
        pypto.assemble(pypto.sum(blk, 1, keepdim=True), [i * BR, 0], s)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(28)
    n = 147
    return {"x": torch.randn(n, C, generator=g), "y": torch.zeros(n, C), "s": torch.zeros(n, 1)}


def reference(x, y, s):
    import torch

    return {"y": torch.sqrt(x.abs()) - x, "s": x.sum(1, keepdim=True)}
