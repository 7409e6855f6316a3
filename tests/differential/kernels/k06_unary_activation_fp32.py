"""Unary activations and rounding on fp32: sigmoid, sin, cos, relu, lrelu, neg, sign, floor,
ceil, trunc, round (half to even), clip."""
import pypto

R, C = 32, 32
T = pypto.Tensor((R, C), pypto.DT_FP32)


@pypto.frontend.jit
def unary_activation(x: T, act: T, trig: T, rnd: T, clp: T):
    pypto.set_vec_tile_shapes(32, 32)
    act[:] = pypto.sigmoid(x) + pypto.relu(x) - pypto.lrelu(x, 0.1) + pypto.neg(x)
    trig[:] = pypto.sin(x) * pypto.cos(x) + pypto.sign(x)
    rnd[:] = pypto.floor(x) + pypto.ceil(x) * 10.0 + pypto.trunc(x) * 100.0 + pypto.round(x) * 1000.0
    clp[:] = pypto.clip(x, -0.5, 0.5)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(6)
    x = torch.randn(R, C, generator=g) * 3.0
    x[0, :8] = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, 3.0])  # exact ties for round
    return {"x": x, "act": torch.zeros(R, C), "trig": torch.zeros(R, C), "rnd": torch.zeros(R, C),
            "clp": torch.zeros(R, C)}


def reference(x, act, trig, rnd, clp):
    import torch
    import torch.nn.functional as F

    return {
        "act": torch.sigmoid(x) + torch.relu(x) - F.leaky_relu(x, 0.1) + (-x),
        "trig": torch.sin(x) * torch.cos(x) + torch.sign(x),
        "rnd": torch.floor(x) + torch.ceil(x) * 10.0 + torch.trunc(x) * 100.0 + torch.round(x) * 1000.0,
        "clp": torch.clamp(x, -0.5, 0.5),
    }
