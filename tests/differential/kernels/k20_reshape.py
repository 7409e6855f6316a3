"""reshape: 2-D to 2-D (with -1), 3-D to 2-D, and an int index that drops a dim (`x[b, :, :]`)."""
import pypto

B, S, H = 4, 8, 64
F32 = pypto.DT_FP32


@pypto.frontend.jit
def reshape_ops(
    x: pypto.Tensor((B * S, H), F32),
    x3: pypto.Tensor((B, S, H), F32),
    folded: pypto.Tensor((B * S * 2, H // 2), F32),
    flat: pypto.Tensor((B * S, H), F32),
    first: pypto.Tensor((S, H), F32),
):
    pypto.set_vec_tile_shapes(16, 32)
    folded[:] = pypto.reshape(x, [-1, H // 2]) * 2.0
    flat[:] = pypto.reshape(x3, [B * S, H]) + x
    first[:] = x3[1, :, :] + 1.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(20)
    return {"x": torch.randn(B * S, H, generator=g), "x3": torch.randn(B, S, H, generator=g),
            "folded": torch.zeros(B * S * 2, H // 2), "flat": torch.zeros(B * S, H), "first": torch.zeros(S, H)}


def reference(x, x3, folded, flat, first):
    return {"folded": x.reshape(-1, H // 2) * 2.0, "flat": x3.reshape(B * S, H) + x, "first": x3[1] + 1.0}
