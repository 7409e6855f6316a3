"""Layer norm over row blocks, fp16 in/out with fp32 statistics: mean and variance by sum,
rsqrt, broadcast (R, 1) statistics against (1, C) gamma/beta."""
import pypto

ROWS, C, BR = 64, 128, 16
EPS = 1e-5
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def layer_norm(
    x: pypto.Tensor((ROWS, C), F16),
    gamma: pypto.Tensor((1, C), F32),
    beta: pypto.Tensor((1, C), F32),
    y: pypto.Tensor((ROWS, C), F16),
):
    pypto.set_vec_tile_shapes(BR, C)
    for i in pypto.loop(ROWS // BR, name="rows", idx_name="i"):
        xf = pypto.cast(pypto.view(x, [BR, C], [i * BR, 0]), F32)
        mean = pypto.sum(xf, -1, keepdim=True) * (1.0 / C)
        d = xf - mean
        var = pypto.sum(d * d, -1, keepdim=True) * (1.0 / C)
        out = d * pypto.rsqrt(var + EPS) * gamma + beta
        pypto.assemble(pypto.cast(out, F16), [i * BR, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(40)
    return {"x": torch.randn(ROWS, C, generator=g).half(), "gamma": torch.rand(1, C, generator=g) + 0.5,
            "beta": torch.randn(1, C, generator=g), "y": torch.zeros(ROWS, C, dtype=torch.float16)}


def reference(x, gamma, beta, y):
    import torch

    out = torch.nn.functional.layer_norm(x.float(), (C,), eps=EPS) * gamma + beta
    return {"y": out.half()}


TOLERANCE = (2e-3, 4e-3)
