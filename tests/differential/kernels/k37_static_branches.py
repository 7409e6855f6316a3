"""Build-time control: a non-tensor parameter picks a branch (if/elif/else on a Python int,
only the taken side is traced), and `for r in range(3)` unrolls at trace time."""
import pypto

R, C = 16, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def static_branches(
    x: pypto.Tensor((R, C), F32),
    y: pypto.Tensor((R, C), F32),
    mode: int = 0,
    scale: float = 1.0,
):
    pypto.set_vec_tile_shapes(R, C)
    acc = x
    for r in range(3):
        acc = acc * scale + float(r)
    if mode == 0:
        y[:] = acc
    elif mode == 1:
        y[:] = pypto.exp(acc)
    else:
        y[:] = pypto.abs(acc) - x


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(37)
    return {"x": torch.randn(R, C, generator=g), "y": torch.zeros(R, C), "mode": 2, "scale": 0.5}


def reference(x, y, mode, scale):
    acc = x
    for r in range(3):
        acc = acc * scale + float(r)
    assert mode == 2
    return {"y": acc.abs() - x}
