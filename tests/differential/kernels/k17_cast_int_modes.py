"""float -> int32 casts with every rounding mode, int32 -> fp32 back, fp16 -> int32."""
import pypto

R, C = 8, 64
F16, F32, I32 = pypto.DT_FP16, pypto.DT_FP32, pypto.DT_INT32
TI = pypto.Tensor((R, C), I32)


@pypto.frontend.jit
def cast_int_modes(
    x: pypto.Tensor((R, C), F32),
    xh: pypto.Tensor((R, C), F16),
    none: TI, rint: TI, rnd: TI, flr: TI, ceil: TI, trunc: TI, from_half: TI,
    as_float: pypto.Tensor((R, C), F32),
):
    pypto.set_vec_tile_shapes(8, 64)
    none[:] = pypto.cast(x, I32)
    rint[:] = pypto.cast(x, I32, pypto.CastMode.CAST_RINT)
    rnd[:] = pypto.cast(x, I32, mode=pypto.CastMode.CAST_ROUND)
    flr[:] = pypto.cast(x, I32, mode=pypto.CastMode.CAST_FLOOR)
    ceil[:] = pypto.cast(x, I32, mode=pypto.CastMode.CAST_CEIL)
    trunc[:] = pypto.cast(x, I32, mode=pypto.CastMode.CAST_TRUNC)
    from_half[:] = pypto.cast(xh, I32, mode=pypto.CastMode.CAST_FLOOR)
    as_float[:] = pypto.cast(pypto.cast(x, I32, mode=pypto.CastMode.CAST_RINT), F32) * 0.5


INT_OUTS = ("none", "rint", "rnd", "flr", "ceil", "trunc", "from_half")


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(17)
    x = torch.randn(R, C, generator=g) * 20
    x[0, :8] = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 7.0])  # ties
    inputs = {"x": x, "xh": (torch.randn(R, C, generator=g) * 20).half(), "as_float": torch.zeros(R, C)}
    inputs.update({name: torch.zeros(R, C, dtype=torch.int32) for name in INT_OUTS})
    return inputs


def reference(x, xh, **_outs):
    import torch

    i32 = torch.int32
    away = torch.sign(x) * torch.floor(x.abs() + 0.5)
    return {"none": torch.trunc(x).to(i32), "rint": torch.round(x).to(i32), "rnd": away.to(i32),
            "flr": torch.floor(x).to(i32), "ceil": torch.ceil(x).to(i32), "trunc": torch.trunc(x).to(i32),
            "from_half": torch.floor(xh.float()).to(i32), "as_float": torch.round(x) * 0.5}
