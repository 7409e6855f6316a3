"""fp16 comparison and selection: a ReLU6-style clamp written with masks."""
import pypto

R, C = 32, 64
T = pypto.Tensor((R, C), pypto.DT_FP16)


@pypto.frontend.jit
def relu6_masks(x: T, out: T):
    pypto.set_vec_tile_shapes(32, 64)
    lo = pypto.where(x < 0.0, 0.0, x)
    out[:] = pypto.where(pypto.gt(lo, 6.0), 6.0, lo)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(9)
    return {"x": (torch.randn(R, C, generator=g) * 5).half(), "out": torch.zeros(R, C, dtype=torch.float16)}


def reference(x, out):
    import torch

    return {"out": torch.clamp(x, 0.0, 6.0)}
