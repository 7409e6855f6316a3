"""Unary math on fp16 (computed in fp32, one rounding per op): exp, sqrt, rsqrt, reciprocal, abs, relu."""
import pypto

R, C = 32, 64
T = pypto.Tensor((R, C), pypto.DT_FP16)


@pypto.frontend.jit
def unary_fp16(x: T, a: T, b: T):
    pypto.set_vec_tile_shapes(32, 64)
    pos = pypto.abs(x) + 1.0
    a[:] = pypto.exp(x) + pypto.sqrt(pos)
    b[:] = pypto.rsqrt(pos) * pypto.reciprocal(pos) + pypto.relu(x)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(7)
    return {"x": torch.randn(R, C, generator=g).half(), "a": torch.zeros(R, C, dtype=torch.float16),
            "b": torch.zeros(R, C, dtype=torch.float16)}


def reference(x, a, b):
    import torch

    pos = x.abs() + 1.0
    return {"a": torch.exp(x) + torch.sqrt(pos), "b": torch.rsqrt(pos) * torch.reciprocal(pos) + torch.relu(x)}
