"""Conditions inside unrolled loops: `if k == 0` in a [4, 1]-unrolled loop (2^4 paths for the
4-way body) and `pypto.is_loop_end(k)` in a [2, 1]-unrolled loop."""
import pypto

BLOCKS, R, C = 10, 8, 32
F32 = pypto.DT_FP32


@pypto.frontend.jit
def cond_in_unrolled(
    x: pypto.Tensor((BLOCKS * R, C), F32),
    acc: pypto.Tensor((R, C), F32),
    last: pypto.Tensor((R, C), F32),
    y: pypto.Tensor((BLOCKS * R, C), F32),
):
    pypto.set_vec_tile_shapes(R, C)
    for k in pypto.loop(BLOCKS, name="acc", idx_name="k", unroll_list=[4, 1]):
        part = pypto.view(x, [R, C], [k * R, 0])
        if k == 0:  # noqa: PTO011 - the path explosion is what this kernel tests
            acc[:] = part * 1.0
        else:
            acc[:] = acc + part
    for j in pypto.loop(BLOCKS, name="tail", idx_name="j", unroll_list=[2, 1]):
        part = pypto.view(x, [R, C], [j * R, 0])
        pypto.assemble(part * 2.0, [j * R, 0], y)
        if pypto.is_loop_end(j):
            last[:] = part + 100.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(32)
    return {"x": torch.randn(BLOCKS * R, C, generator=g), "acc": torch.zeros(R, C), "last": torch.zeros(R, C),
            "y": torch.zeros(BLOCKS * R, C)}


def reference(x, acc, last, y):
    blocks = x.reshape(BLOCKS, R, C)
    return {"acc": blocks.sum(0), "last": blocks[-1] + 100.0, "y": x * 2.0}


TOLERANCE = (1e-5, 2e-5)
