"""Running maximum over blocks with `pypto.is_loop_begin(i)` / `pypto.is_loop_end(i)` on a
loop with a non-zero start and a step of 2 (every other block)."""
import pypto

BLOCKS, R, C = 9, 8, 32
F32 = pypto.DT_FP32


@pypto.frontend.jit
def loop_begin_end(
    x: pypto.Tensor((BLOCKS * R, C), F32),
    run: pypto.Tensor((R, C), F32),
    final: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(R, C)
    for i in pypto.loop(1, BLOCKS, 2, name="odd", idx_name="i"):
        part = pypto.view(x, [R, C], [i * R, 0])
        if pypto.is_loop_begin(i):
            run[:] = pypto.clone(part)
        else:
            run[:] = pypto.maximum(run, part)
        if pypto.is_loop_end(i):
            final[:] = run - part


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(31)
    return {"x": torch.randn(BLOCKS * R, C, generator=g), "run": torch.zeros(R, C), "final": torch.zeros(R, C)}


def reference(x, run, final):
    blocks = x.reshape(BLOCKS, R, C)[1::2]
    peak = blocks.amax(0)
    return {"run": peak, "final": peak - blocks[-1]}
