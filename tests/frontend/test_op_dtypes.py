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
