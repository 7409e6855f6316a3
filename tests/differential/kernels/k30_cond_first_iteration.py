"""Loop-carried accumulation with `if i == 0` / `else`, and a final step under `if i == n - 1`."""
import pypto

BLOCKS, R, C = 6, 16, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def cond_first(
    x: pypto.Tensor((BLOCKS * R, C), F32),
    acc: pypto.Tensor((R, C), F32),
    mean: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(BLOCKS, name="blk", idx_name="i"):
        part = pypto.view(x, [R, C], [i * R, 0])
        if i == 0:
            acc[:] = pypto.clone(part)
        else:
            acc[:] = acc + part
        if i == BLOCKS - 1:
            mean[:] = acc * (1.0 / BLOCKS)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(30)
    return {"x": torch.randn(BLOCKS * R, C, generator=g), "acc": torch.zeros(R, C), "mean": torch.zeros(R, C)}


def reference(x, acc, mean):
    total = x.reshape(BLOCKS, R, C).sum(0)
    return {"acc": total, "mean": total * (1.0 / BLOCKS)}
