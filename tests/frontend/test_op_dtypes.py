"""A dtype an op page excludes is pypto's refusal: the front end reports it as PTO106 at the call,
naming the op page (pypto_ast/ir/op_dtypes.py), before any backend runs."""

from __future__ import annotations

import pytest

from pypto_ast import pipeline

KERNEL = """import pypto


@pypto.frontend.jit
def kernel(x: pypto.Tensor([4, 64], pypto.{dtype}), y: pypto.Tensor([4, 64], pypto.{dtype}),
           out: pypto.Tensor([4, 64], pypto.{out})):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = {expr}
"""


@pytest.mark.parametrize("expr,dtype,out,page", [
    ("pypto.bitwise_and(x, y)", "DT_FP32", "DT_FP32", "pypto-bitwise_and.md"),
    ("pypto.bitwise_not(x)", "DT_FP16", "DT_FP16", "pypto-bitwise_not.md"),
    ("pypto.bitwise_left_shift(x, 2)", "DT_INT32", "DT_INT32", "pypto-bitwise_left_shift.md"),
    ("pypto.ceil_div(x, y)", "DT_FP32", "DT_FP32", "pypto-ceil_div.md"),
    ("pypto.fmod(x, y)", "DT_INT32", "DT_INT32", "pypto-fmod.md"),
    ("pypto.gcd(x, y)", "DT_FP32", "DT_FP32", "pypto-gcd.md"),
    ("pypto.copysign(x, y)", "DT_INT16", "DT_INT16", "pypto-copysign.md"),
    ("pypto.sum(x, -1, keepdim=True) + y", "DT_FP16", "DT_FP16", "pypto-sum.md"),  # the host emitted it
])
def test_a_dtype_the_op_page_excludes_is_pto106_at_the_call(tmp_path, expr, dtype, out, page):
    path = tmp_path / "refused.py"
    path.write_text(KERNEL.format(dtype=dtype, out=out, expr=expr))
    with pytest.raises(pipeline.KernelErrors) as caught:
        pipeline.lower_file(str(path))
    assert caught.value.code == "PTO106"
    message, span = caught.value.findings[0]
    assert f"(op page: {page})" in message and f"not {dtype[3:].lower()}" in message, message
    assert span is not None and span.line == 8


def test_the_dtypes_an_op_page_allows_lower(tmp_path):
    path = tmp_path / "allowed.py"
    path.write_text(KERNEL.format(dtype="DT_INT16", out="DT_INT16", expr="pypto.bitwise_xor(pypto.remainder(x, y), x)"))
    program = pipeline.lower_file(str(path))
    assert "bitwise_xor" in pipeline.emit(program, "ir", spans=False)


def test_rms_norm_of_fp16_computes_in_fp32_and_rounds_back_once(tmp_path):
    """The rms_norm page: the result is cast back to the input's dtype; its sum runs in fp32 (pypto
    has no fp16 sum), so an fp16 rms_norm lowers, and agrees with torch on both backends."""
    import torch

    from pypto_ast import live

    path = tmp_path / "rms.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    "def rms(x: pypto.Tensor([8, 64], pypto.DT_FP16), g: pypto.Tensor([64], pypto.DT_FP16),\n"
                    "        out: pypto.Tensor([8, 64], pypto.DT_FP16)):\n"
                    "    pypto.set_vec_tile_shapes(8, 64)\n    out[:] = pypto.rms_norm(x, g, 1e-6)\n")
    kernel = live.load_module(str(path)).rms
    gen = torch.Generator().manual_seed(2)
    x, g = (torch.randn(8, 64, generator=gen) * 40).half(), torch.randn(64, generator=gen).half()
    xf = x.float()
    want = (xf * torch.rsqrt((xf * xf).mean(-1, keepdim=True) + 1e-6) * g.float()).half()
    for backend in ("interp", "host"):
        out = torch.zeros(8, 64, dtype=torch.float16)
        args = {"x": x, "g": g, "out": out}
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        torch.testing.assert_close(out, want, rtol=2e-3, atol=1e-3, msg=backend)
