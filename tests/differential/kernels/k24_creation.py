"""Creation ops inside a kernel: full, zeros, ones (fp16), arange (int32 and float)."""
import pypto

R, C = 16, 64
F16, F32, I32 = pypto.DT_FP16, pypto.DT_FP32, pypto.DT_INT32


@pypto.frontend.jit
def creation(
    x: pypto.Tensor((R, C), F32),
    a: pypto.Tensor((R, C), F32),
    h: pypto.Tensor((R, C), F16),
    idx: pypto.Tensor((C,), I32),
    ramp: pypto.Tensor((R, C), F32),
    steps: pypto.Tensor((16,), F32),
):
    pypto.set_vec_tile_shapes(16, 64)
    a[:] = x * pypto.full([R, C], 1.5, F32) + pypto.zeros(R, C)
    h[:] = pypto.ones([R, C], dtype=F16) * 3.0
    idx[:] = pypto.arange(C)
    ramp[:] = x + pypto.cast(pypto.arange(C), F32)
    steps[:] = pypto.arange(0.0, 8.0, 0.5)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(24)
    return {"x": torch.randn(R, C, generator=g), "a": torch.zeros(R, C),
            "h": torch.zeros(R, C, dtype=torch.float16), "idx": torch.zeros(C, dtype=torch.int32),
            "ramp": torch.zeros(R, C), "steps": torch.zeros(16)}


def reference(x, **_outs):
    import torch

    return {"a": x * 1.5, "h": torch.full((R, C), 3.0, dtype=torch.float16),
            "idx": torch.arange(C, dtype=torch.int32), "ramp": x + torch.arange(C, dtype=torch.float32),
            "steps": torch.arange(0.0, 8.0, 0.5)}
