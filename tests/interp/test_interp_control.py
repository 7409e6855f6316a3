"""Control flow, memory and the error conventions."""

from __future__ import annotations

import pytest
import torch
from irbuild import (
    BinExpr, Branch, C, Loop, Read, Return, ShapeOf, Span, T, UnExpr, V, Var, assemble, block,
    local, op, prog, scalar, tensor, view,
)

from pypto_ast.ir.interp import InterpError, run_program


def i_(name="i"):
    return Var(name)


def add(a, b):
    return BinExpr("+", a, b)


def mul(a, b):
    return BinExpr("*", a, b)


def sub(a, b):
    return BinExpr("-", a, b)


N = ShapeOf("x", 0)


def rowwise_program(exp_op="exp"):
    """for i in loop((n + 15) // 16): valid = min(16, n - i*16); y[i*16:] = exp(view(x))"""
    valid = BinExpr("min", C(16), sub(N, mul(i_(), C(16))))
    body = block(view("blk", T("x"), (16, 64), (mul(i_(), C(16)), 0), valid_shape=(valid, 64)),
                 op("e", exp_op, V("blk")),
                 assemble("e", "y", (mul(i_(), C(16)), 0)))
    loop = Loop("i", C(0), BinExpr("//", add(N, C(15)), C(16)), C(1), (body,), name="rows")
    return prog([tensor("x", (N, 64), "fp32"), tensor("y", (ShapeOf("y", 0), 64), "fp32", out=True)],
                loop)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 40, 64])
def test_ragged_tail_through_valid_shape(n):
    x = torch.randn(n, 64)
    y = torch.zeros(n, 64)
    assert run_program(rowwise_program(), {"x": x, "y": y}) is None
    torch.testing.assert_close(y, x.exp())


def test_tail_without_valid_shape_is_out_of_bounds():
    body = block(view("blk", T("x"), (16, 64), (mul(i_(), C(16)), 0), span=Span(7, 8, 7, 40)),
                 op("e", "exp", V("blk")), assemble("e", "y", (mul(i_(), C(16)), 0)))
    p = prog([tensor("x", (N, 64), "fp32"), tensor("y", (N, 64), "fp32", out=True)],
             Loop("i", C(0), BinExpr("//", add(N, C(15)), C(16)), C(1), (body,)))
    with pytest.raises(InterpError, match="out of bounds") as info:
        run_program(p, {"x": torch.randn(40, 64), "y": torch.zeros(40, 64)})
    assert info.value.span == Span(7, 8, 7, 40)
    assert "line 7" in str(info.value)


def test_lengths_tensor_drives_valid_shape():
    """Per batch b: cur = lens[b]; out[b, :cur] = x[b, :cur] * 2; the rest stays untouched."""
    B, S, H = 3, 8, 16
    cur = Read("lens", (Var("b"),))
    body = block(view("a", T("x"), (1, S, H), (Var("b"), 0, 0), valid_shape=(1, cur, H)),
                 op("m", "mul", V("a"), C(2.0)),
                 assemble("m", "out", (Var("b"), 0, 0)))
    p = prog([tensor("x", (B, S, H), "fp32"), tensor("lens", (B,), "int32"),
              tensor("out", (B, S, H), "fp32", out=True)],
             Loop("b", C(0), C(B), C(1), (body,)))
    x = torch.randn(B, S, H)
    lens = torch.tensor([8, 3, 0], dtype=torch.int32)
    out = torch.full((B, S, H), -7.0)
    run_program(p, {"x": x, "lens": lens, "out": out})
    for b, n in enumerate(lens.tolist()):
        torch.testing.assert_close(out[b, :n], x[b, :n] * 2)
        assert (out[b, n:] == -7.0).all()


def test_branch_on_first_iteration_accumulates():
    """acc = x[0] on i == 0, acc = acc + x[i] otherwise (a local written, then read)."""
    K = 5
    part = view("p", T("x"), (1, 8), (i_(), 0))
    first = block(part, op("c", "clone", V("p")), assemble("c", "acc", (0, 0)), name="b1")
    rest = block(part, op("s", "add", T("acc"), V("p")), assemble("s", "acc", (0, 0)), name="b2")
    loop = Loop("i", C(0), C(K), C(1),
                (Branch(BinExpr("==", i_(), C(0)), (first,), (rest,)),))
    final = block(view("f", T("acc"), (1, 8), (0, 0)), op("r", "mul", V("f"), C(1.0)),
                  assemble("r", "out", (0, 0)), name="b3")
    p = prog([tensor("x", (K, 8), "fp32"), tensor("out", (1, 8), "fp32", out=True)], loop, final,
             locals=(local("acc", (1, 8), "fp32"),))
    x = torch.randn(K, 8)
    out = torch.zeros(1, 8)
    run_program(p, {"x": x, "out": out})
    torch.testing.assert_close(out, x.sum(0, keepdim=True))


def test_local_read_before_write():
    p = prog([tensor("a", (4, 4), "fp32")],
             block(op("s", "add", T("a"), T("t"), span=Span(3, 4, 3, 20))),
             locals=(local("t", (4, 4), "fp32"),))
    with pytest.raises(InterpError, match="read before write: local @t") as info:
        run_program(p, {"a": torch.ones(4, 4)})
    assert info.value.span == Span(3, 4, 3, 20)
    # half written, then a view of the written half is fine but the whole is not
    p = prog([tensor("a", (4, 4), "fp32"), tensor("out", (2, 4), "fp32", out=True)],
             block(view("h", T("a"), (2, 4), (0, 0)), assemble("h", "t", (0, 0)),
                   view("ok", T("t"), (2, 4), (0, 0)), assemble("ok", "out", (0, 0)),
                   view("bad", T("t"), (3, 4), (0, 0))),
             locals=(local("t", (4, 4), "fp32"),))
    out = torch.zeros(2, 4)
    with pytest.raises(InterpError, match="read before write"):
        run_program(p, {"a": torch.ones(4, 4), "out": out})
    assert (out == 1).all()
    # scalar reads of a local are tracked too
    p = prog([], block(op(None, "store_scalar", C(5), T("n"), index=(C(0),)),
                       op("z", "zeros", shape=(Read("n", (C(0),)),))),
             block(op("w", "zeros", shape=(Read("n", (C(1),)),))),
             locals=(local("n", (2,), "int32"),))
    with pytest.raises(InterpError, match=r"read before write: @n\[1\]"):
        run_program(p, {})


def test_output_written_in_place_only_where_assembled():
    x = torch.randn(8, 8)
    out = torch.full((8, 8), 42.0)
    alias = out  # the caller's tensor object itself is written
    p = prog([tensor("x", (8, 8), "fp32"), tensor("out", (8, 8), "fp32", out=True)],
             block(view("a", T("x"), (2, 4), (2, 4)), op("n", "neg", V("a")),
                   assemble("n", "out", (5, 0))))
    run_program(p, {"x": x, "out": out})
    assert alias is out
    torch.testing.assert_close(out[5:7, 0:4], -x[2:4, 4:8])
    mask = torch.ones(8, 8, dtype=torch.bool)
    mask[5:7, 0:4] = False
    assert (out[mask] == 42.0).all()


def test_inputs_are_read_as_they_were_at_the_call_when_an_output_shares_their_memory():
    # a[:] = x + 1; b[:] = x * 2 with a passed as x: b is computed from x before a was written
    p = prog([tensor("x", (4, 4), "fp32"), tensor("a", (4, 4), "fp32", out=True),
              tensor("b", (4, 4), "fp32", out=True)],
             block(op("s", "add", T("x"), 1.0), assemble("s", "a", (0, 0)),
                   op("t", "mul", T("x"), 2.0), assemble("t", "b", (0, 0))))
    x, b = torch.randn(4, 4), torch.zeros(4, 4)
    want_a, want_b = x + 1.0, x * 2.0
    run_program(p, {"x": x, "a": x, "b": b})
    torch.testing.assert_close(x, want_a)
    torch.testing.assert_close(b, want_b)


def test_an_output_that_requires_grad_is_refused_before_the_run():
    p = prog([tensor("x", (4, 4), "fp32"), tensor("o", (4, 4), "fp32", out=True)],
             block(op("e", "exp", T("x")), assemble("e", "o", (0, 0))))
    o = torch.zeros(4, 4, requires_grad=True)
    with pytest.raises(ValueError, match=r"^k\(\): argument `o` is an output but a leaf tensor that requires grad"):
        run_program(p, {"x": torch.ones(4, 4), "o": o})
    with torch.no_grad():
        run_program(p, {"x": torch.ones(4, 4), "o": o})
    torch.testing.assert_close(o.detach(), torch.full((4, 4), 2.718281828))


def test_assemble_checks():
    base = [tensor("x", (4, 4), "fp32"), tensor("o", (4, 4), "fp16", out=True)]
    p = prog(base, block(op("e", "exp", T("x")), assemble("e", "o", (0, 0))))
    with pytest.raises(InterpError, match="value is fp32 but @o is fp16"):
        run_program(p, {"x": torch.ones(4, 4), "o": torch.zeros(4, 4, dtype=torch.float16)})
    p = prog([tensor("x", (4, 4), "fp32"), tensor("o", (4, 4), "fp32", out=True)],
             block(op("e", "exp", T("x")), assemble("e", "o", (1, 0))))
    with pytest.raises(InterpError, match="out of bounds of @o"):
        run_program(p, {"x": torch.ones(4, 4), "o": torch.zeros(4, 4)})


def test_return_convention():
    x = torch.randn(4, 4)
    one = prog([tensor("x", (4, 4), "fp32")], block(op("e", "exp", T("x"))), Return((V("e"),)))
    torch.testing.assert_close(run_program(one, {"x": x}), x.exp())
    two = prog([tensor("x", (4, 4), "fp32")],
               block(op("e", "exp", T("x")), op("s", "sum", V("e"), dim=1)),
               Return((V("e"), V("s"))),
               block(op("never", "no_such_op")))  # not reached: Return ends the program
    e, s = run_program(two, {"x": x})
    torch.testing.assert_close(e, x.exp())
    torch.testing.assert_close(s, x.exp().sum(1))


def test_scalar_params_and_expressions():
    """scale is a scalar param; the loop bound uses // and %, the branch uses and/not/max."""
    p = prog([tensor("x", (6, 4), "fp32"), scalar("scale"), scalar("k", value=3),
              tensor("out", (6, 4), "fp32", out=True)],
             Loop("i", C(0), BinExpr("max", Var("k"), BinExpr("%", C(6), C(4))), C(1), (
                 Branch(BinExpr("and", UnExpr("not", BinExpr("==", BinExpr("%", i_(), C(2)), C(1))),
                                BinExpr(">=", i_(), C(0))),
                        (block(view("a", T("x"), (2, 4), (mul(i_(), C(2)), 0)),
                               op("m", "mul", V("a"), Var("scale")),
                               assemble("m", "out", (mul(i_(), C(2)), 0))),),
                        (block(view("a", T("x"), (2, 4), (mul(i_(), C(2)), 0)),
                               op("m", "neg", V("a")),
                               assemble("m", "out", (mul(i_(), C(2)), 0))),)),
             )))
    x = torch.randn(6, 4)
    out = torch.zeros(6, 4)
    run_program(p, {"x": x, "scale": 0.5, "out": out})  # k falls back to Param.value = 3
    torch.testing.assert_close(out[0:2], x[0:2] * 0.5)
    torch.testing.assert_close(out[2:4], -x[2:4])
    torch.testing.assert_close(out[4:6], x[4:6] * 0.5)


def test_unrolled_loop_body_is_run_as_given():
    """unroll=2: the body holds the copies for i and i+1; the loop step is 2."""
    def copy(k):
        idx = add(i_(), C(k))
        return [view(f"a{k}", T("x"), (1, 4), (idx, 0)), op(f"m{k}", "mul", V(f"a{k}"), C(float(k + 2))),
                assemble(f"m{k}", "out", (idx, 0))]
    p = prog([tensor("x", (6, 4), "fp32"), tensor("out", (6, 4), "fp32", out=True)],
             Loop("i", C(0), C(6), C(2), (block(*copy(0), *copy(1)),), unroll=2))
    x = torch.randn(6, 4)
    out = torch.zeros(6, 4)
    run_program(p, {"x": x, "out": out})
    torch.testing.assert_close(out[0::2], x[0::2] * 2)
    torch.testing.assert_close(out[1::2], x[1::2] * 3)


def test_value_redefined_each_iteration_keeps_the_last():
    p = prog([tensor("x", (4, 2), "fp32")],
             Loop("i", C(0), C(4), C(1), (block(view("v", T("x"), (1, 2), (i_(), 0))),)),
             Return((V("v"),)))
    x = torch.randn(4, 2)
    torch.testing.assert_close(run_program(p, {"x": x}), x[3:4])


def test_view_of_a_value_inherits_clipped_valid_extent():
    x = torch.randn(10, 4)
    p = prog([tensor("x", (10, 4), "fp32")],
             block(view("a", T("x"), (16, 4), (0, 0), valid_shape=(10, 4)),
                   view("b", V("a"), (8, 4), (8, 0))),
             Return((V("b"),)))
    torch.testing.assert_close(run_program(p, {"x": x}), x[8:10])
    p = prog([tensor("x", (10, 4), "fp32")],
             block(view("a", T("x"), (16, 4), (0, 0), valid_shape=(10, 4)),
                   view("b", V("a"), (8, 4), (8, 0), valid_shape=(4, 4))))
    with pytest.raises(InterpError, match="out of bounds of valid extent"):
        run_program(p, {"x": x})


@pytest.mark.parametrize("program,inputs,message", [
    (prog([], block(op("r", "gelu", C(1.0), span=Span(2, 4, 2, 9)))), {}, "unknown opcode 'gelu'"),
    (prog([], block(op("r", "exp", V("nope")))), {}, "%nope is not defined"),
    (prog([tensor("x", (2, 2), "fp32")], block()), {"x": torch.ones(2, 2, dtype=torch.float16)},
     "declared fp32 but got fp16"),
    (prog([tensor("x", (2, 2), "fp32")], block()), {"x": torch.ones(3, 2)}, "dim 0 = 2"),
    (prog([tensor("x", (2, 2), "fp32")], block()), {}, "no tensor for parameter 'x'"),
    (prog([scalar("s")], block()), {}, "no value for scalar parameter 's'"),
    (prog([], Loop("i", C(0), C(4), C(0), ())), {}, "step 0"),
    (prog([], block(op("r", "zeros", shape=(BinExpr("//", C(1), C(0)),)))), {}, "division by zero"),
    (prog([tensor("x", (2, 2), "fp32")], block(op("r", "exp", T("x")), op("s", "sum", V("r"), dim=5))),
     {"x": torch.ones(2, 2)}, "dim 5 out of range"),
    (prog([tensor("x", (2, 2), "fp32")], block(op("r", "cast", T("x"), dtype="fp64"))),
     {"x": torch.ones(2, 2)}, "unknown dtype 'fp64'"),
    (prog([tensor("x", (2, 2), "fp32")], block(op("r", "add", T("x"), Read("x", (C(0), C(0)))))),
     {"x": torch.ones(2, 2)}, "scalar reads need an integer tensor"),
])
def test_errors_are_interp_errors(program, inputs, message):
    with pytest.raises(InterpError, match=message.replace("(", r"\(").replace("[", r"\[")):
        run_program(program, inputs)


def test_unknown_opcode_carries_the_span():
    p = prog([], block(op("r", "gelu", C(1.0), span=Span(2, 4, 2, 9))))
    with pytest.raises(InterpError) as info:
        run_program(p, {})
    assert info.value.span == Span(2, 4, 2, 9)
    assert info.value.message == "unknown opcode 'gelu'"


def test_move_store_scalar_and_read_drive_a_loop():
    """n[0] = 3 (store_scalar), then loop(n[0]) copies rows; move writes a whole output."""
    p = prog([tensor("x", (4, 2), "fp32"), tensor("out", (4, 2), "fp32", out=True),
              tensor("whole", (4, 2), "fp32", out=True)],
             block(op(None, "store_scalar", C(3), T("n"), index=(C(0),)),
                   op("c", "clone", T("x")), op(None, "move", V("c"), T("whole"))),
             Loop("i", C(0), Read("n", (C(0),)), C(1),
                  (block(view("r", T("x"), (1, 2), (i_(), 0)), assemble("r", "out", (i_(), 0))),)),
             locals=(local("n", (1,), "int32"),))
    x = torch.randn(4, 2)
    out, whole = torch.zeros(4, 2), torch.zeros(4, 2)
    run_program(p, {"x": x, "out": out, "whole": whole})
    torch.testing.assert_close(out[:3], x[:3])
    assert (out[3] == 0).all()
    torch.testing.assert_close(whole, x)


def test_bitcast_view():
    x = torch.tensor([[1.0, -2.0]])
    p = prog([tensor("x", (1, 2), "fp32")],
             block(op("v", "view", T("x"), shape=(C(1), C(2)), offsets=(C(0), C(0)), dtype="int32")),
             Return((V("v"),)))
    assert torch.equal(run_program(p, {"x": x}), x.view(torch.int32))
