"""Elementwise binary ops on fp32: add/sub with alpha, mul, div, maximum, minimum."""
import pypto

R, C = 32, 64


@pypto.frontend.jit
def binary_fp32(
    a: pypto.Tensor((R, C), pypto.DT_FP32),
    b: pypto.Tensor((R, C), pypto.DT_FP32),
    s: pypto.Tensor((R, C), pypto.DT_FP32),
    d: pypto.Tensor((R, C), pypto.DT_FP32),
    m: pypto.Tensor((R, C), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, C)
    s[:] = pypto.add(a, b, alpha=0.5)
    d[:] = pypto.sub(a, b, alpha=2.0) * b / (pypto.abs(b) + 1.0)
    m[:] = pypto.maximum(a, b) - pypto.minimum(a, b)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(1)
    return {"a": torch.randn(R, C, generator=g), "b": torch.randn(R, C, generator=g),
            "s": torch.zeros(R, C), "d": torch.zeros(R, C), "m": torch.zeros(R, C)}


def reference(a, b, s, d, m):
    import torch

    return {"s": a + 0.5 * b, "d": (a - 2.0 * b) * b / (b.abs() + 1.0),
            "m": torch.maximum(a, b) - torch.minimum(a, b)}
