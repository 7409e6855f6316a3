"""Tensor-scalar operands on both sides: x + c, c * x, c - x, c / x, x ** 2, maximum(x, c)."""
import pypto

R, C = 16, 128


@pypto.frontend.jit
def scalar_operands(
    x: pypto.Tensor((R, C), pypto.DT_FP32),
    o1: pypto.Tensor((R, C), pypto.DT_FP32),
    o2: pypto.Tensor((R, C), pypto.DT_FP32),
    o3: pypto.Tensor((R, C), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, 64)
    o1[:] = (x + 1.5) * 2.0 - 0.25
    o2[:] = 1.0 - 3.0 / (x * x + 1.0) + x / 4.0
    o3[:] = pypto.minimum(pypto.maximum(x, -0.5), 0.75) + x ** 2


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(2)
    return {"x": torch.randn(R, C, generator=g), "o1": torch.zeros(R, C), "o2": torch.zeros(R, C),
            "o3": torch.zeros(R, C)}


def reference(x, o1, o2, o3):
    import torch

    return {"o1": (x + 1.5) * 2.0 - 0.25, "o2": 1.0 - 3.0 / (x * x + 1.0) + x / 4.0,
            "o3": torch.clamp(x, -0.5, 0.75) + x ** 2}
