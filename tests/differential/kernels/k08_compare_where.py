"""Comparisons (tensor and scalar right-hand sides) producing BOOL masks, and where() with
tensor, float and Element branches."""
import pypto

R, C = 32, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def compare_where(
    x: pypto.Tensor((R, C), F32),
    y: pypto.Tensor((R, C), F32),
    mask: pypto.Tensor((R, C), pypto.DT_BOOL),
    sel: pypto.Tensor((R, C), F32),
    band: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(32, 64)
    mask[:] = x >= y
    sel[:] = pypto.where(x > y, x, y) + pypto.where(x < 0.0, 0.0, x)
    inside = pypto.where(pypto.le(x, 1.0), 1.0, pypto.Element(F32, -1.0))
    band[:] = inside + pypto.where(pypto.ne(x, y), 0.5, 2.0) + pypto.where(pypto.eq(x, y), y, 0.0)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(8)
    x = torch.randn(R, C, generator=g)
    y = torch.randn(R, C, generator=g)
    y[:4] = x[:4]  # some equal elements
    return {"x": x, "y": y, "mask": torch.zeros(R, C, dtype=torch.bool), "sel": torch.zeros(R, C),
            "band": torch.zeros(R, C)}


def reference(x, y, mask, sel, band):
    import torch

    zero = torch.zeros(())
    sel = torch.where(x > y, x, y) + torch.where(x < 0.0, zero, x)
    band = (torch.where(x <= 1.0, 1.0, -1.0) + torch.where(x != y, 0.5, 2.0)
            + torch.where(x == y, y, zero))
    return {"mask": x >= y, "sel": sel, "band": band}
