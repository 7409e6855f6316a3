"""Reductions, cumsum and matmul against plain torch."""

from __future__ import annotations

import pytest
import torch
from irbuild import TORCH, T, V, assemble, block, op, prog, tensor, view

from pypto_ast.ir.interp import InterpError, run_program


def _rand(shape, dtype, seed=0, lo=-2.0, hi=2.0):
    g = torch.Generator().manual_seed(seed)
    if dtype in ("int8", "int16", "int32"):
        return torch.randint(int(lo) * 2, int(hi) * 2 + 1, shape, generator=g).to(TORCH[dtype])
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(TORCH[dtype])


def run1(x, dtype, opcode, out_shape, out_dtype=None, operands=None, **attrs):
    out_dtype = out_dtype or dtype
    out = torch.zeros(out_shape, dtype=TORCH[out_dtype])
    p = prog([tensor("x", tuple(x.shape), dtype), tensor("out", out_shape, out_dtype, out=True)],
             block(op("r", opcode, T("x"), *(operands or ()), **attrs),
                   assemble("r", "out", (0,) * len(out_shape))))
    run_program(p, {"x": x, "out": out})
    return out


@pytest.mark.parametrize("opcode,fn,dtypes", [
    ("sum", torch.sum, ["fp32"]),
    ("amax", torch.amax, ["fp32", "fp16", "bf16"]),
    ("amin", torch.amin, ["fp32", "fp16", "bf16"]),
    ("prod", torch.prod, ["fp32"]),
])
@pytest.mark.parametrize("dim,keepdim", [(-1, True), (0, False), (1, True)])
def test_reductions(opcode, fn, dtypes, dim, keepdim):
    for dtype in dtypes:
        x = _rand((3, 8, 16), dtype, seed=1, lo=0.5, hi=1.5)
        want = fn(x, dim=dim, keepdim=keepdim) if opcode != "prod" else torch.prod(x, dim, keepdim)
        got = run1(x, dtype, opcode, tuple(want.shape), dim=dim, keepdim=keepdim)
        torch.testing.assert_close(got, want)


def test_sum_over_a_tuple_of_dims_and_fp16_rejected():
    x = _rand((4, 8, 16), "fp32", seed=2)
    torch.testing.assert_close(run1(x, "fp32", "sum", (4,), dim=(1, 2)), x.sum(dim=(1, 2)))
    with pytest.raises(InterpError, match="sum: dtype fp16 not supported"):
        run1(x.half(), "fp16", "sum", (4, 8), dim=2)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_var(dtype):
    x = _rand((6, 32), dtype, seed=3)
    want = torch.var(x.float(), dim=1, correction=0, keepdim=True).to(x.dtype)
    torch.testing.assert_close(run1(x, dtype, "var", (6, 1), dim=1, correction=0, keepdim=True), want)
    want_all = torch.var(x.float()).to(x.dtype)
    torch.testing.assert_close(run1(x, dtype, "var", ()), want_all)


def test_reduction_runs_over_valid_data_only():
    x = _rand((10, 16), "fp32", seed=4)
    out = torch.zeros(16, 1)
    p = prog([tensor("x", (10, 16), "fp32"), tensor("out", (16, 1), "fp32", out=True)],
             block(view("a", T("x"), (16, 16), (0, 0), valid_shape=(10, 16)),
                   op("s", "sum", V("a"), dim=1, keepdim=True),
                   op("m", "amax", V("a"), dim=0, keepdim=True),
                   assemble("s", "out", (0, 0))))
    run_program(p, {"x": x, "out": out})
    torch.testing.assert_close(out[:10], x.sum(1, keepdim=True))
    assert (out[10:] == 0).all()  # nothing assembled there


@pytest.mark.parametrize("dtype,out_dtype", [("fp32", "fp32"), ("fp16", "fp16"), ("int32", "int64")])
def test_cumsum(dtype, out_dtype):
    x = _rand((4, 16), dtype, seed=5)
    want = torch.cumsum(x.float() if dtype == "fp16" else x, dim=1).to(TORCH[out_dtype])
    torch.testing.assert_close(run1(x, dtype, "cumsum", (4, 16), out_dtype=out_dtype, dim=1), want)


# ---------------------------------------------------------------------------------------


def run_mm(a, b, dtype, out_dtype, bias=None, **attrs):
    shape = tuple(torch.matmul(a.float().transpose(-1, -2) if attrs.get("a_trans") else a.float(),
                               b.float().transpose(-1, -2) if attrs.get("b_trans") else b.float()).shape)
    params = [tensor("a", tuple(a.shape), dtype), tensor("b", tuple(b.shape), dtype)]
    operands = [T("a"), T("b")]
    inputs = {"a": a, "b": b}
    if bias is not None:
        bdt = {v: k for k, v in TORCH.items()}[bias.dtype]
        params.append(tensor("bias", tuple(bias.shape), bdt))
        operands.append(T("bias"))
        inputs["bias"] = bias
    out = torch.zeros(shape, dtype=TORCH[out_dtype])
    params.append(tensor("out", shape, out_dtype, out=True))
    p = prog(params, block(op("c", "matmul", *operands, out_dtype=out_dtype, **attrs),
                           assemble("c", "out", (0,) * len(shape))))
    run_program(p, {**inputs, "out": out})
    return out


@pytest.mark.parametrize("dtype,out_dtype", [("fp32", "fp32"), ("fp16", "fp16"), ("fp16", "fp32"),
                                             ("bf16", "bf16"), ("bf16", "fp32"), ("int8", "int32")])
def test_matmul_accumulates_in_wide_type(dtype, out_dtype):
    a = _rand((16, 64), dtype, seed=6)
    b = _rand((64, 32), dtype, seed=7)
    acc = torch.int64 if dtype == "int8" else torch.float32
    want = (a.to(acc) @ b.to(acc)).to(TORCH[out_dtype])
    torch.testing.assert_close(run_mm(a, b, dtype, out_dtype), want, rtol=1e-6, atol=1e-5)


def test_matmul_transposes_batched_and_bias():
    a = _rand((2, 3, 32, 16), "fp16", seed=8)  # (B, H, K, M) -> a_trans
    b = _rand((2, 3, 24, 32), "fp16", seed=9)  # (B, H, N, K) -> b_trans
    # K = 32 is one step of the cube's K loop: the exact sum, rounded to fp32, then to fp16
    want = (a.double().transpose(-1, -2) @ b.double().transpose(-1, -2)).float().half()
    got = run_mm(a, b, "fp16", "fp16", a_trans=True, b_trans=True)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    a2, b2 = _rand((8, 16), "fp16", seed=10), _rand((16, 12), "fp16", seed=11)
    bias = _rand((1, 12), "fp32", seed=12)
    want = (a2.float() @ b2.float() + bias).to(torch.float32)
    torch.testing.assert_close(run_mm(a2, b2, "fp16", "fp32", bias=bias), want)
    i8a, i8b = _rand((4, 8), "int8", seed=13), _rand((8, 6), "int8", seed=14)
    ib = torch.arange(6, dtype=torch.int32).reshape(1, 6)
    torch.testing.assert_close(run_mm(i8a, i8b, "int8", "int32", bias=ib),
                               (i8a.int() @ i8b.int() + ib).int())


def test_matmul_errors():
    a, b = _rand((8, 16), "fp16"), _rand((16, 8), "fp16")
    with pytest.raises(InterpError, match="out_dtype int32 not supported"):
        run_mm(a, b, "fp16", "int32")
    with pytest.raises(InterpError, match="inner dimensions differ"):
        p = prog([tensor("a", (8, 16), "fp16"), tensor("b", (8, 8), "fp16")],
                 block(op("c", "matmul", T("a"), T("b"))))
        run_program(p, {"a": a, "b": _rand((8, 8), "fp16")})
    with pytest.raises(InterpError, match="dtype int32 not supported"):
        run_mm(a.int(), b.int(), "int32", "int32")
