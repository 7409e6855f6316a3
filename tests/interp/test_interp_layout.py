"""Layout and creation ops."""

from __future__ import annotations

import pytest
import torch
from irbuild import C, T, TensorType, V, assemble, block, op, prog, tensor, view

from pypto_ast.ir.interp import InterpError, run_program


def run(params, ops, inputs, out_shape, out_dtype="fp32", fill=0):
    out = torch.full(out_shape, fill, dtype={"fp32": torch.float32, "int32": torch.int32,
                                             "fp16": torch.float16}[out_dtype])
    p = prog(list(params) + [tensor("out", out_shape, out_dtype, out=True)],
             block(*ops, assemble("r", "out", (0,) * len(out_shape))))
    run_program(p, {**inputs, "out": out})
    return out


X = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)
XP = [tensor("x", (2, 3, 4), "fp32")]


def test_reshape_transpose_unsqueeze():
    got = run(XP, [op("r", "reshape", T("x"), shape=(6, -1))], {"x": X}, (6, 4))
    torch.testing.assert_close(got, X.reshape(6, 4))
    got = run(XP, [op("r", "transpose", T("x"), dims=(0, 2))], {"x": X}, (4, 3, 2))
    torch.testing.assert_close(got, X.transpose(0, 2))
    got = run(XP, [op("r", "unsqueeze", T("x"), dim=-1)], {"x": X}, (2, 3, 4, 1))
    torch.testing.assert_close(got, X.unsqueeze(-1))
    with pytest.raises(InterpError, match="different sizes"):
        run(XP, [op("r", "reshape", T("x"), shape=(5, 5))], {"x": X}, (5, 5))


def test_reshape_of_a_partially_valid_row_block():
    x = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    out = torch.full((64,), -1.0)
    p = prog([tensor("x", (10, 4), "fp32"), tensor("out", (64,), "fp32", out=True)],
             block(view("a", T("x"), (16, 4), (0, 0), valid_shape=(5, 4)),
                   op("r", "reshape", V("a"), shape=(64,)),
                   assemble("r", "out", (0,))))
    run_program(p, {"x": x, "out": out})
    torch.testing.assert_close(out[:20], x[:5].reshape(-1))
    assert (out[20:] == -1).all()


def test_concat_expand_clone_pad_fillpad():
    a = torch.rand(2, 4)
    b = torch.rand(3, 4)
    params = [tensor("a", (2, 4), "fp32"), tensor("b", (3, 4), "fp32")]
    got = run(params, [op("r", "concat", (T("a"), T("b")), dim=0)], {"a": a, "b": b}, (5, 4))
    torch.testing.assert_close(got, torch.cat([a, b]))
    col = torch.rand(4, 1)
    got = run([tensor("c", (4, 1), "fp32")], [op("r", "expand_clone", T("c"), shape=(4, 8))],
              {"c": col}, (4, 8))
    torch.testing.assert_close(got, col.expand(4, 8))
    got = run(params[:1], [op("r", "pad", T("a"), pad=(0, 4, 0, 1), value=float("-inf"))],
              {"a": a}, (3, 8))
    torch.testing.assert_close(got, torch.nn.functional.pad(a, (0, 4, 0, 1), value=float("-inf")))
    with pytest.raises(InterpError, match="right/bottom"):
        run(params[:1], [op("r", "pad", T("a"), pad=(1, 0))], {"a": a}, (2, 5))
    x = torch.rand(10, 8)
    got = run([tensor("x", (10, 8), "fp32")],
              [view("v", T("x"), (16, 8), (0, 0), valid_shape=(10, 8)),
               op("r", "fillpad", V("v"), value=float("-inf"))], {"x": x}, (16, 8))
    torch.testing.assert_close(got[:10], x)
    assert (got[10:] == float("-inf")).all()


def test_creation_ops():
    got = run([], [op("r", "full", C(2.5), shape=(3, 4), dtype="fp16")], {}, (3, 4), "fp16")
    torch.testing.assert_close(got, torch.full((3, 4), 2.5, dtype=torch.float16))
    got = run([], [op("r", "zeros", shape=(3, 4), dtype="int32")], {}, (3, 4), "int32", fill=7)
    assert (got == 0).all()
    got = run([], [op("r", "ones", shape=(3, 4))], {}, (3, 4))  # default fp32
    assert (got == 1).all()
    got = run([], [op("r", "arange", C(2), C(10), C(2))], {}, (4,), "int32")
    assert got.tolist() == [2, 4, 6, 8]
    got = run([], [op("r", "arange", C(0.0), C(1.0), C(0.25))], {}, (4,))
    assert got.tolist() == [0.0, 0.25, 0.5, 0.75]
    # full with valid_shape only produces the valid block
    got = run([], [op("r", "full", C(1.0), shape=(4, 4), dtype="fp32", valid_shape=(C(2), C(4)))],
              {}, (4, 4), fill=9)
    assert (got[:2] == 1).all() and (got[2:] == 9).all()
    with pytest.raises(InterpError, match="does not fit int32"):
        run([], [op("r", "full", C(2.5), shape=(2,), dtype="int32")], {}, (2,), "int32")


def test_declared_types_are_checked():
    good = op("r", "exp", T("x"), types=(TensorType((C(2), C(3), C(4)), "fp32"),))
    torch.testing.assert_close(run(XP, [good], {"x": X}, (2, 3, 4)), X.exp())
    bad = op("r", "sum", T("x"), dim=2, types=(TensorType((C(2), C(3), C(1)), "fp32"),))
    with pytest.raises(InterpError, match=r"declared fp32\[2, 3, 1\] but the op computes fp32\[2, 3\]"):
        run(XP, [bad], {"x": X}, (2, 3))
