"""Unary math on fp32: exp family, logs, roots and reciprocals."""
import pypto

R, C = 16, 64
F32 = pypto.DT_FP32
T = pypto.Tensor((R, C), F32)


@pypto.frontend.jit
def unary_math(x: T, e: T, e2: T, em1: T, lg: T, lg2: T, lg10: T, lg1p: T, sq: T, rs: T, rc: T):
    pypto.set_vec_tile_shapes(16, 64)
    pos = pypto.abs(x) + 0.5
    e[:] = pypto.exp(x)
    e2[:] = pypto.exp2(x)
    em1[:] = pypto.expm1(x)
    lg[:] = pypto.log(pos)
    lg2[:] = pypto.log2(pos)
    lg10[:] = pypto.log10(pos)
    lg1p[:] = pypto.log1p(pos)
    sq[:] = pypto.sqrt(pos)
    rs[:] = pypto.rsqrt(pos)
    rc[:] = pypto.reciprocal(pos)


OUTS = ("e", "e2", "em1", "lg", "lg2", "lg10", "lg1p", "sq", "rs", "rc")


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(5)
    inputs = {"x": torch.randn(R, C, generator=g)}
    inputs.update({name: torch.zeros(R, C) for name in OUTS})
    return inputs


def reference(x, **_outs):
    import torch

    pos = x.abs() + 0.5
    return {"e": torch.exp(x), "e2": torch.exp2(x), "em1": torch.expm1(x), "lg": torch.log(pos),
            "lg2": torch.log2(pos), "lg10": torch.log10(pos), "lg1p": torch.log1p(pos),
            "sq": torch.sqrt(pos), "rs": torch.rsqrt(pos), "rc": 1.0 / pos}
