"""Float casts: fp32 -> fp16 (nearest even), fp16 -> fp32, and an fp16 chain done in fp32."""
import pypto

R, C = 32, 64
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def cast_float(
    x: pypto.Tensor((R, C), F32),
    h: pypto.Tensor((R, C), F16),
    back: pypto.Tensor((R, C), F32),
    y: pypto.Tensor((R, C), F16),
    mixed: pypto.Tensor((R, C), F16),
):
    pypto.set_vec_tile_shapes(32, 64)
    half = pypto.cast(x, F16)
    h[:] = half
    back[:] = pypto.cast(half, F32)
    mixed[:] = pypto.cast(pypto.cast(y, F32) * 3.0 + 0.1, F16)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(16)
    return {"x": torch.randn(R, C, generator=g) * 100, "h": torch.zeros(R, C, dtype=torch.float16),
            "back": torch.zeros(R, C), "y": torch.randn(R, C, generator=g).half(),
            "mixed": torch.zeros(R, C, dtype=torch.float16)}


def reference(x, h, back, y, mixed):
    return {"h": x.half(), "back": x.half().float(), "mixed": (y.float() * 3.0 + 0.1).half()}
