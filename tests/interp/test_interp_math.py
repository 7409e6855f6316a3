"""The interpreter's math functions, softmax and 16-bit reductions against torch (docs/semantics.md,
"bf16" and "Math functions")."""

from __future__ import annotations

import math

import pytest
import torch
from irbuild import TORCH, T, V, assemble, block, op, prog, ref_round, tensor, view
from test_interp_elementwise import _rand, run_binary, run_unary

from pypto_ast.ir.interp import run_program

IN_DOUBLE = {  # computed in fp64 and rounded once, as the host's math APIs compute them
    "erf": (torch.erf, -3.0, 3.0), "erfc": (torch.erfc, -2.0, 6.0), "atan": (torch.atan, -20.0, 20.0),
    "sinh": (torch.sinh, -10.0, 10.0), "cosh": (torch.cosh, -10.0, 10.0), "asinh": (torch.asinh, -50.0, 50.0),
    "acosh": (torch.acosh, 1.0, 50.0), "atanh": (torch.atanh, -0.99, 0.99),
}


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("opcode", sorted(IN_DOUBLE))
def test_math_functions_are_torch_in_double_rounded_once(opcode, dtype):
    """erf ... atanh were unknown opcodes: fp64 rounded to fp32 (then once more to fp16/bf16)."""
    fn, lo, hi = IN_DOUBLE[opcode]
    x = _rand(dtype, lo=lo, hi=hi, seed=21)
    want = fn(x.double()).float().to(TORCH[dtype])
    torch.testing.assert_close(run_unary(opcode, x, dtype), want, rtol=0, atol=0, equal_nan=True)


def test_sinh_and_cosh_are_finite_where_torchs_fp32_overflows():
    """torch's vectorised fp32 sinh/cosh (a row of 64) overflow from |x| > 88.72; the results are finite
    up to 89.4 (the host's Sinh/Cosh compute in fp64)."""
    x = torch.full((1, 64), 90.0)
    x[0, :3] = torch.tensor([89.0, -89.3, 88.8])
    assert torch.isinf(torch.sinh(x)[0, :3]).all()
    got = run_unary("sinh", x, "fp32")
    assert got[0, :3].tolist() == [float(torch.tensor(math.sinh(v))) for v in x[0, :3].double().tolist()]
    assert got[0, 3] == math.inf and run_unary("cosh", x, "fp32")[0, 0] == float(torch.tensor(math.cosh(89.0)))


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_atan2_is_torchs_fp32_op_rounded_once(dtype):
    """atan2 was an unknown opcode (hypot and pow are in test_interp_elementwise's table)."""
    a, b = _rand(dtype, lo=-4.0, seed=22), _rand(dtype, lo=-3.0, hi=3.0, seed=23)
    torch.testing.assert_close(run_binary("atan2", a, b, dtype), ref_round(torch.atan2, dtype, a, b), rtol=0, atol=0)


def _prelu(x: torch.Tensor, w: torch.Tensor, dtype: str) -> torch.Tensor:
    shape = tuple(x.shape)
    p = prog([tensor("x", shape, dtype), tensor("w", tuple(w.shape), dtype), tensor("out", shape, dtype, out=True)],
             block(op("r", "prelu", T("x"), T("w")), assemble("r", "out", (0,) * len(shape))))
    out = torch.zeros(shape, dtype=TORCH[dtype])
    run_program(p, {"x": x, "w": w, "out": out})
    return out


@pytest.mark.parametrize("shape", [(16,), (4, 16), (2, 4, 8), (2, 4, 3, 5)])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_prelu_weights_run_along_axis_1(shape, dtype):
    """prelu was an unknown opcode: torch's prelu, the 1-D weight along axis 1 (one weight for 1-D x)."""
    g = torch.Generator().manual_seed(24)
    x = torch.randn(shape, generator=g).to(TORCH[dtype])
    w = torch.randn((shape[1] if len(shape) > 1 else 1,), generator=g).to(TORCH[dtype])
    x.view(-1)[:3] = torch.tensor([0.0, -0.0, float("nan")])
    want = torch.nn.functional.prelu(x.float(), w.float()).to(TORCH[dtype])
    got = _prelu(x, w, dtype)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(torch.signbit(got), torch.signbit(want))


def _softmax_ref(x: torch.Tensor) -> torch.Tensor:
    f = x.float()
    e = torch.exp(f - f.amax(-1, keepdim=True))
    return (e / e.sum(-1, keepdim=True)).to(x.dtype)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_softmax_is_pyptos_composition_in_fp32(dtype):
    """softmax on fp16/bf16 was "dtype not supported" (pypto's softmax casts to fp32 and back); every
    dtype is exp(x - amax) / sum in fp32, rounded once, within a few fp32 ulps of torch's softmax; a row
    holding NaN or +inf, or only -inf, is NaN."""
    x = _rand(dtype, (4, 16), lo=-10.0, hi=10.0, seed=25)
    x[1, 3], x[2, 0], x[3] = float("nan"), float("inf"), float("-inf")
    got = run_unary("softmax", x, dtype, dim=-1)
    torch.testing.assert_close(got, _softmax_ref(x), rtol=0, atol=0, equal_nan=True)
    assert bool(got[1:].isnan().all()) and not bool(got[0].isnan().any())
    torch.testing.assert_close(got[0].double(), torch.softmax(x[0].double(), -1),
                               rtol=1e-6 if dtype == "fp32" else 1e-2, atol=0 if dtype == "fp32" else 1e-7,
                               check_dtype=False)


def test_softmax_along_another_axis():
    x = _rand("fp32", (4, 16), seed=26)
    got = run_unary("softmax", x, "fp32", dim=0)
    e = torch.exp(x - x.amax(0, keepdim=True))
    torch.testing.assert_close(got, e / e.sum(0, keepdim=True), rtol=0, atol=0)


def test_a_bf16_sum_accumulates_in_fp32_and_rounds_once():
    """sum on bf16 was "dtype bf16 not supported (supported: fp32)": 256 + 1 + 1 + 1 + 1 is 260, where
    a bf16 accumulator stays at 256."""
    x = torch.zeros(2, 16, dtype=torch.bfloat16)
    x[0, :5] = torch.tensor([256.0, 1.0, 1.0, 1.0, 1.0])
    x[1] = _rand("bf16", (16,), seed=27)
    out = torch.zeros(2, 1, dtype=torch.bfloat16)
    p = prog([tensor("x", (2, 16), "bf16"), tensor("out", (2, 1), "bf16", out=True)],
             block(view("a", T("x"), (2, 16), (0, 0)), op("s", "sum", V("a"), dim=-1, keepdim=True),
                   assemble("s", "out", (0, 0))))
    run_program(p, {"x": x, "out": out})
    assert out[0, 0] == 260.0
    torch.testing.assert_close(out, x.float().sum(-1, keepdim=True).bfloat16(), rtol=0, atol=0)


def test_cbrt_keeps_the_sign_of_zero():
    x = torch.tensor([[-0.0, 0.0, -8.0, 27.0, float("-inf")]])
    got = run_unary("cbrt", x, "fp32")
    assert got.tolist() == [[-0.0, 0.0, -2.0, 3.0, float("-inf")]] and torch.signbit(got[0, 0])
