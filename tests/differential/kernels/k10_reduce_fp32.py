"""Reductions on fp32 with dim/keepdim: sum, amax, amin, prod (function and method forms)."""
import pypto

R, C = 32, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def reduce_fp32(
    x: pypto.Tensor((R, C), F32),
    row_sum: pypto.Tensor((R, 1), F32),
    row_max: pypto.Tensor((R,), F32),
    col_min: pypto.Tensor((1, C), F32),
    row_prod: pypto.Tensor((R, 1), F32),
    centred: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(32, 64)
    row_sum[:] = pypto.sum(x, -1, keepdim=True)
    row_max[:] = x.amax(1)
    col_min[:] = pypto.amin(x, dim=0, keepdim=True)
    row_prod[:] = pypto.prod(x * 0.05 + 1.0, 1, True)
    centred[:] = x - x.sum(1, True) * (1.0 / C)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(10)
    return {"x": torch.randn(R, C, generator=g), "row_sum": torch.zeros(R, 1), "row_max": torch.zeros(R),
            "col_min": torch.zeros(1, C), "row_prod": torch.zeros(R, 1), "centred": torch.zeros(R, C)}


def reference(x, **_outs):
    return {"row_sum": x.sum(-1, keepdim=True), "row_max": x.amax(1), "col_min": x.amin(0, keepdim=True),
            "row_prod": (x * 0.05 + 1.0).prod(1, keepdim=True),
            "centred": x - x.sum(1, keepdim=True) * (1.0 / C)}


TOLERANCE = (1e-5, 2e-5)
