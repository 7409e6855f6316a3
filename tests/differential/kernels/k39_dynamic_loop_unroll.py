"""`pypto.loop_unroll` over DYNAMIC rows: each iteration handles f blocks, and the valid row
count `pypto.min(BR * f, n - i * BR)` clips the ragged end."""
import pypto

C, BR = 64, 16
F16 = pypto.DT_FP16


@pypto.frontend.jit
def dynamic_loop_unroll(
    x: pypto.Tensor([pypto.DYNAMIC, C], F16),
    y: pypto.Tensor([pypto.DYNAMIC, C], F16),
):
    pypto.set_vec_tile_shapes(BR, C)
    n = x.shape[0]
    nblk = (n + BR - 1) // BR
    for i, f in pypto.loop_unroll(0, nblk, 1, name="blk", idx_name="b", unroll_list=[4, 2]):
        rows = pypto.min(BR * f, n - i * BR)
        part = pypto.view(x, [BR * f, C], [i * BR, 0], valid_shape=[rows, C])
        pypto.assemble(pypto.exp(part) - part, [i * BR, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(39)
    n = 16 * 6 + 9  # 7 blocks: 4 + 2 + 1, the last one ragged
    return {"x": torch.randn(n, C, generator=g).half(), "y": torch.zeros(n, C, dtype=torch.float16)}


def reference(x, y):
    import torch

    return {"y": torch.exp(x) - x}
