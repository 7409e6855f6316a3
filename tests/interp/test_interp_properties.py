"""Random elementwise/reduction chains on random shapes, dtypes and valid extents, compared
with the same chain written directly in torch (fp16/bf16: fp32 compute, one rounding per op).

Run longer with HYPOTHESIS_PROFILE=long.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st
from irbuild import TORCH, BinExpr, C, Loop, ShapeOf, T, V, Var, assemble, block, op, prog, tensor, view

from pypto_ast.ir.interp import run_program

UNARY = {
    "exp": torch.exp, "abs": torch.abs, "neg": torch.neg, "relu": torch.relu, "sqrt": torch.sqrt,
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "sign": torch.sign,
    "reciprocal": torch.reciprocal, "rsqrt": torch.rsqrt, "log1p": torch.log1p,
    "expm1": torch.expm1, "lrelu": lambda t: torch.where(t >= 0, t, t * 0.01),
}
BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "maximum": torch.maximum, "minimum": torch.minimum, "hypot": torch.hypot,
}
REDUCE = ("sum", "amax", "amin")

steps = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY))),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)),
              st.one_of(st.tuples(st.just("scalar"), st.floats(-3, 3, width=16)),
                        st.tuples(st.just("tensor"), st.lists(st.booleans(), min_size=3, max_size=3)))),
    st.tuples(st.just("reduce"), st.sampled_from(REDUCE), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("where"), st.floats(-1, 1, width=16)),
)


@st.composite
def chains(draw):
    dtype = draw(st.sampled_from(["fp32", "fp16", "bf16"]))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    valid = tuple(draw(st.integers(1, n)) for n in shape)
    return dtype, shape, valid, draw(st.lists(steps, min_size=1, max_size=6)), draw(st.integers(0, 999))


def _build(dtype, shape, valid, chain, seed):
    td = TORCH[dtype]
    half = dtype != "fp32"
    g = torch.Generator().manual_seed(seed)

    def rand(s):
        return (torch.randn(s, generator=g) * 2).to(td)

    def scal(v):
        return torch.tensor(v, dtype=td).float() if half else torch.tensor(v, dtype=td)

    def up(t):
        return t.float().contiguous()

    x = rand(valid)
    params, inputs = [tensor("x", valid, dtype)], {"x": x}
    ops = [view("v0", T("x"), shape, (0,) * len(shape), valid_shape=valid)]
    cur, decl, vld, ref = "v0", shape, valid, x
    for k, step in enumerate(chain):
        new = f"v{k + 1}"
        if step[0] == "unary":
            ops.append(op(new, step[1], V(cur)))
            ref = UNARY[step[1]](up(ref)).to(td)
        elif step[0] == "binary":
            name, other = step[1], step[2]
            if other[0] == "scalar":
                ops.append(op(new, name, V(cur), C(float(other[1]))))
                ref = BINARY[name](up(ref), scal(float(other[1]))).to(td)
            else:
                yshape = tuple(1 if m else n for m, n in zip(other[1], decl))
                y = rand(yshape)
                params.append(tensor(f"y{k}", yshape, dtype))
                inputs[f"y{k}"] = y
                ops.append(op(new, name, V(cur), T(f"y{k}")))
                yv = y[tuple(slice(0, 1 if n == 1 else v) for n, v in zip(yshape, vld))]
                ref = BINARY[name](up(ref), up(yv)).to(td)
        elif step[0] == "reduce":
            name, dim, keepdim = step[1], step[2] % len(decl), step[3] or len(decl) == 1
            if name == "sum" and half:  # sum is fp32-only: cast around it
                ops += [op(f"c{k}", "cast", V(cur), dtype="fp32"),
                        op(f"s{k}", "sum", V(f"c{k}"), dim=dim, keepdim=keepdim),
                        op(new, "cast", V(f"s{k}"), dtype=dtype, satmode="OFF")]
            else:
                ops.append(op(new, name, V(cur), dim=dim, keepdim=keepdim))
            fn = {"sum": torch.sum, "amax": torch.amax, "amin": torch.amin}[name]
            ref = fn(up(ref), dim=(dim,), keepdim=keepdim).to(td)

            decl, vld = (tuple(1 if d == dim else n for d, n in enumerate(s) if keepdim or d != dim)
                         for s in (decl, vld))
        else:
            ops += [op(f"g{k}", "gt", V(cur), C(float(step[1]))),
                    op(new, "where", V(f"g{k}"), V(cur), C(0.0))]
            r = up(ref)
            ref = torch.where(r > scal(float(step[1])), r, scal(0.0)).to(td)
        cur = new
    out = torch.full(decl, 123.0, dtype=td)
    params.append(tensor("out", decl, dtype, out=True))
    ops.append(assemble(cur, "out", (0,) * len(decl)))
    return prog(params, block(*ops)), {**inputs, "out": out}, ref, vld


@given(chains())
def test_random_chains_match_torch(case):
    program, inputs, ref, vld = _build(*case)
    run_program(program, inputs)
    out = inputs["out"]
    region = tuple(slice(0, v) for v in vld)
    torch.testing.assert_close(out[region], ref, rtol=0, atol=0, equal_nan=True)
    untouched = torch.ones(out.shape, dtype=torch.bool)
    untouched[region] = False
    assert (out[untouched] == 123.0).all()


@given(st.integers(1, 70), st.sampled_from([8, 16, 32]), st.sampled_from(["exp", "neg", "abs"]),
       st.sampled_from(["fp32", "fp16"]))
def test_random_ragged_loops_match_whole_tensor_torch(n, bs, opcode, dtype):
    """for i in loop(ceil(n / bs)): rows = min(bs, n - i*bs); y[i*bs:] = op(x[i*bs:][:rows])"""
    N = ShapeOf("x", 0)
    i = Var("i")
    off = BinExpr("*", i, C(bs))
    rows = BinExpr("min", C(bs), BinExpr("-", N, off))
    body = block(view("b", T("x"), (bs, 16), (off, 0), valid_shape=(rows, 16)),
                 op("e", opcode, V("b")), assemble("e", "y", (off, 0)))
    p = prog([tensor("x", (N, 16), dtype), tensor("y", (N, 16), dtype, out=True)],
             Loop("i", C(0), BinExpr("//", BinExpr("+", N, C(bs - 1)), C(bs)), C(1), (body,)))
    x = torch.randn(n, 16).to(TORCH[dtype])
    y = torch.zeros(n, 16, dtype=TORCH[dtype])
    run_program(p, {"x": x, "y": y})
    fn = {"exp": torch.exp, "neg": torch.neg, "abs": torch.abs}[opcode]
    torch.testing.assert_close(y, fn(x.float()).to(x.dtype), rtol=0, atol=0)
