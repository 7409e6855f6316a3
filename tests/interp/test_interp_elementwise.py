"""Elementwise families (binary, unary, compare, where) against plain torch."""

from __future__ import annotations

import math

import pytest
import torch
from irbuild import TORCH, C, Return, T, V, assemble, block, op, prog, ref_round, tensor, view

from pypto_ast.ir.interp import InterpError, run_program

SHAPE = (4, 16)


def _rand(dtype, shape=SHAPE, lo=-4.0, hi=4.0, seed=0, nonzero=False):
    g = torch.Generator().manual_seed(seed)
    if dtype in ("int8", "int16", "int32", "int64", "uint8"):
        t = torch.randint(int(lo), int(hi) + 1, shape, generator=g).to(TORCH[dtype])
        if nonzero:
            t[t == 0] = 1
        return t
    t = (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo)
    if nonzero:
        t[t.abs() < 0.25] = 0.5
    return t.to(TORCH[dtype])


def run_binary(opcode, a, b, dtype, out_dtype=None, **attrs):
    out_dtype = out_dtype or dtype
    params = []
    operands = []
    inputs = {}
    for name, x in (("a", a), ("b", b)):
        if isinstance(x, torch.Tensor):
            params.append(tensor(name, tuple(x.shape), dtype))
            operands.append(T(name))
            inputs[name] = x
        else:
            operands.append(C(x))
    shapes = [tuple(x.shape) for x in (a, b) if isinstance(x, torch.Tensor)]
    try:
        shape = torch.broadcast_shapes(*shapes)
    except RuntimeError:
        shape = shapes[0]
    out = torch.zeros(shape, dtype=TORCH[out_dtype])
    params.append(tensor("out", tuple(shape), out_dtype, out=True))
    p = prog(params, block(op("r", opcode, *operands, **attrs), assemble("r", "out", (0,) * len(shape))))
    run_program(p, {**inputs, "out": out})
    return out


BINARY = {
    "add": (lambda a, b: a + b, ["fp32", "fp16", "bf16", "int16", "int32"]),
    "sub": (lambda a, b: a - b, ["fp32", "fp16", "bf16", "int16", "int32"]),
    "mul": (lambda a, b: a * b, ["fp32", "fp16", "bf16", "int16", "int32"]),
    "div": (lambda a, b: a / b, ["fp32", "fp16", "bf16"]),
    "maximum": (torch.maximum, ["fp32", "fp16", "bf16", "int16", "int32"]),
    "minimum": (torch.minimum, ["fp32", "fp16", "bf16", "int16", "int32"]),
    "remainder": (torch.remainder, ["fp32", "fp16", "int16", "int32"]),
    "fmod": (torch.fmod, ["fp32", "fp16", "bf16"]),
    "hypot": (torch.hypot, ["fp32", "fp16", "bf16"]),
    "pow": (torch.pow, ["fp32", "fp16"]),
    "bitwise_and": (torch.bitwise_and, ["int16"]),
    "bitwise_or": (torch.bitwise_or, ["int16"]),
    "bitwise_xor": (torch.bitwise_xor, ["int16"]),
}


@pytest.mark.parametrize("opcode,dtype", [(o, d) for o, (_, ds) in BINARY.items() for d in ds])
def test_binary_matches_torch(opcode, dtype):
    fn, _ = BINARY[opcode]
    nonzero = opcode in ("div", "remainder", "fmod")
    lo = 0.5 if opcode == "pow" else -4.0
    a = _rand(dtype, lo=lo, seed=1)
    b = _rand(dtype, lo=-2.0, hi=2.0, seed=2, nonzero=nonzero)
    got = run_binary(opcode, a, b, dtype)
    want = ref_round(fn, dtype, a, b)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "int32"])
def test_add_sub_alpha(dtype):
    a, b = _rand(dtype, seed=3), _rand(dtype, seed=4)
    alpha = 2 if dtype == "int32" else 0.5
    torch.testing.assert_close(run_binary("add", a, b, dtype, alpha=alpha),
                               ref_round(lambda x, y: x + alpha * y, dtype, a, b), rtol=0, atol=0)
    torch.testing.assert_close(run_binary("sub", a, b, dtype, alpha=alpha),
                               ref_round(lambda x, y: x - alpha * y, dtype, a, b), rtol=0, atol=0)


def test_scalar_operands_take_the_tensor_dtype():
    a = _rand("fp16", seed=5)
    # 0.1 is rounded to fp16 first (Element of the tensor's dtype), then the add runs in fp32.
    got = run_binary("add", a, 0.1, "fp16")
    want = (a.float() + torch.tensor(0.1, dtype=torch.float16).float()).half()
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    # a float scalar on an int tensor is truncated to an int
    i = _rand("int32", seed=6)
    torch.testing.assert_close(run_binary("mul", i, 2.7, "int32"), i * 2)
    # scalar on the left
    torch.testing.assert_close(run_binary("sub", 1.0, a.float(), "fp32"), 1.0 - a.float())
    torch.testing.assert_close(run_binary("remainder", 7, i.abs() + 1, "int32"),
                               torch.remainder(torch.tensor(7, dtype=torch.int32), i.abs() + 1))


def test_broadcasting():
    col = _rand("fp32", (32, 1), seed=7)
    row = _rand("fp32", (1, 64), seed=8)
    torch.testing.assert_close(run_binary("add", col, row, "fp32"), col + row)
    vec = _rand("fp32", (64,), seed=9)
    full = _rand("fp32", (32, 64), seed=10)
    torch.testing.assert_close(run_binary("mul", full, vec, "fp32"), full * vec)
    with pytest.raises(InterpError, match="do not broadcast"):
        run_binary("add", _rand("fp32", (4, 3)), _rand("fp32", (4, 5)), "fp32")


def test_operand_dtypes_must_match():
    with pytest.raises(InterpError, match="dtypes differ"):
        a, b = _rand("fp32"), _rand("fp16")
        p = prog([tensor("a", SHAPE, "fp32"), tensor("b", SHAPE, "fp16")],
                 block(op("r", "add", T("a"), T("b"))))
        run_program(p, {"a": a, "b": b})


def test_unsupported_dtype():
    with pytest.raises(InterpError, match="div: dtype int32 not supported"):
        run_binary("div", _rand("int32"), _rand("int32", nonzero=True), "int32")
    with pytest.raises(InterpError, match="sin: dtype bf16 not supported"):
        run_unary("sin", _rand("bf16"), "bf16")


def test_integer_pow_negative_exponent_is_an_interp_error():
    with pytest.raises(InterpError, match="pow"):
        run_binary("pow", _rand("int32"), -1, "int32")


# ---------------------------------------------------------------------------------------


def run_unary(opcode, x, dtype, out_dtype=None, **attrs):
    out_dtype = out_dtype or dtype
    out = torch.zeros(x.shape, dtype=TORCH[out_dtype])
    p = prog([tensor("x", tuple(x.shape), dtype), tensor("out", tuple(x.shape), out_dtype, out=True)],
             block(view("a", T("x"), tuple(x.shape), (0,) * x.dim()),
                   op("r", opcode, V("a"), **attrs),
                   assemble("r", "out", (0,) * x.dim())))
    run_program(p, {"x": x, "out": out})
    return out


def _softmax(t):
    """pypto's composition: exp(x - amax) / sum, a true division (torch multiplies by 1 / sum)."""
    e = torch.exp(t - t.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def _cbrt(t):
    d = t.double()
    return (d.sign() * d.abs().pow(1 / 3)).to(t.dtype)


UNARY = {
    "abs": (torch.abs, "F", {}), "neg": (torch.neg, "FI", {}), "exp": (torch.exp, "F", {}),
    "exp2": (torch.exp2, "F", {}), "expm1": (torch.expm1, "F", {}),
    "sqrt": (torch.sqrt, "P", {}), "rsqrt": (torch.rsqrt, "P", {}),
    "reciprocal": (torch.reciprocal, "P", {}), "log": (torch.log, "P", {}),
    "log2": (torch.log2, "P", {}), "log10": (torch.log10, "P", {}), "log1p": (torch.log1p, "P", {}),
    "ceil": (torch.ceil, "FI", {}), "floor": (torch.floor, "FI", {}), "trunc": (torch.trunc, "FI", {}),
    "round": (torch.round, "FI", {}), "sign": (torch.sign, "FI", {}), "relu": (torch.relu, "F", {}),
    "lrelu": (lambda t: torch.nn.functional.leaky_relu(t, 0.2), "F", {"negative_slope": 0.2}),
    "sigmoid": (torch.sigmoid, "F", {}), "sin": (torch.sin, "16", {}), "cos": (torch.cos, "16", {}),
    "cbrt": (_cbrt, "F", {}), "softmax": (_softmax, "F", {"dim": -1}),
    "tril": (lambda t: torch.tril(t, 1), "FI", {"diagonal": 1}),
    "triu": (lambda t: torch.triu(t, -1), "FI", {"diagonal": -1}),
    "clone": (torch.clone, "FI", {}),
    "clip": (lambda t: t.clamp(-1, 2), "FI", {"min": -1, "max": 2}),
}
_KIND = {"F": ["fp32", "fp16", "bf16"], "P": ["fp32", "fp16", "bf16"], "32": ["fp32"], "16": ["fp32", "fp16"],
         "FI": ["fp32", "fp16", "bf16", "int16", "int32"]}


@pytest.mark.parametrize("opcode,dtype", [(o, d) for o, (_, k, _) in UNARY.items() for d in _KIND[k]])
def test_unary_matches_torch(opcode, dtype):
    fn, kind, attrs = UNARY[opcode]
    lo = 0.1 if kind == "P" else -3.0
    x = _rand(dtype, lo=lo, hi=3.0, seed=11)
    got = run_unary(opcode, x, dtype, **attrs)
    want = ref_round(fn, dtype, x)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def test_exp2_on_int_gives_fp32():
    x = _rand("int32", lo=-3, hi=5, seed=12)
    torch.testing.assert_close(run_unary("exp2", x, "int32", out_dtype="fp32"), torch.exp2(x.float()))


def test_round_is_half_to_even():
    x = torch.tensor([[0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.6]])
    torch.testing.assert_close(run_unary("round", x, "fp32"),
                               torch.tensor([[0.0, 2.0, 2.0, -0.0, -2.0, 2.0, 3.0, -3.0]]))


@pytest.mark.parametrize("opcode,fn,dtypes", [
    ("logical_not", lambda t: t == 0, ["fp32", "fp16", "int8", "bool"]),
    ("isfinite", torch.isfinite, ["fp32", "fp16", "int32"]),
    ("signbit", torch.signbit, ["fp32", "bf16", "int32"]),
])
def test_bool_unary(opcode, fn, dtypes):
    for dtype in dtypes:
        if dtype == "bool":
            x = torch.tensor([[True, False, True]])
        else:
            x = _rand(dtype, seed=13)
            if dtype in ("fp32", "fp16"):
                x[0, :3] = torch.tensor([float("inf"), float("nan"), -0.0]).to(x.dtype)
        torch.testing.assert_close(run_unary(opcode, x, dtype, out_dtype="bool"), fn(x))


@pytest.mark.parametrize("opcode,fn", [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt),
                                       ("le", torch.le), ("gt", torch.gt), ("ge", torch.ge),
                                       ("greater", torch.gt)])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_compare(opcode, fn, dtype):
    a, b = _rand(dtype, seed=14), _rand(dtype, seed=15)
    b[0] = a[0]
    torch.testing.assert_close(run_binary(opcode, a, b, dtype, out_dtype="bool"), fn(a, b))
    torch.testing.assert_close(run_binary(opcode, a, 0.5, dtype, out_dtype="bool"),
                               fn(a.float(), torch.tensor(0.5, dtype=a.dtype).float()))


def test_where():
    a, b = _rand("fp16", seed=16), _rand("fp16", seed=17)
    cond = a > b
    out = torch.zeros(SHAPE, dtype=torch.float16)
    p = prog([tensor("c", SHAPE, "bool"), tensor("a", SHAPE, "fp16"), tensor("b", SHAPE, "fp16"),
              tensor("out", SHAPE, "fp16", out=True)],
             block(op("r", "where", T("c"), T("a"), C(0.0)),
                   op("s", "where", T("c"), V("r"), T("b")),
                   assemble("s", "out", (0, 0))))
    run_program(p, {"c": cond, "a": a, "b": b, "out": out})
    torch.testing.assert_close(out, torch.where(cond, a, b))
    with pytest.raises(InterpError, match="condition must be bool"):
        run_program(prog([tensor("a", SHAPE, "fp16")], block(op("r", "where", T("a"), T("a"), T("a")))),
                    {"a": a})


def test_fp16_tolerance_against_fp32():
    """fp16 values round after each op: equal to the per-op rounded reference, and within fp16
    tolerance (not exactly) of the same chain computed in fp32."""
    x32 = _rand("fp32", (8, 64), lo=-2, hi=2, seed=18)
    results = {}
    for dtype in ("fp32", "fp16"):
        x = x32.to(TORCH[dtype])
        out = torch.zeros(8, 64, dtype=TORCH[dtype])
        p = prog([tensor("x", (8, 64), dtype), tensor("out", (8, 64), dtype, out=True)],
                 block(op("a", "exp", T("x")), op("b", "mul", V("a"), C(1.7)),
                       op("c", "add", V("b"), T("x")), op("d", "sqrt", V("a")),
                       op("e", "div", V("c"), V("d")), assemble("e", "out", (0, 0))))
        run_program(p, {"x": x, "out": out})
        results[dtype] = out
    x = x32.half().float()

    def r(t):
        return t.half().float()
    a = r(x.exp())
    want16 = r(r(r(a * r(torch.tensor(1.7))) + x) / r(a.sqrt())).half()
    torch.testing.assert_close(results["fp16"], want16, rtol=0, atol=0)
    torch.testing.assert_close(results["fp16"].float(), results["fp32"], rtol=2e-3, atol=2e-3)
    assert not torch.equal(results["fp16"].float(), results["fp32"])
    assert math.isfinite(results["fp16"].float().sum().item())


def test_clip_with_tensor_bounds_in_attrs_or_operands():
    x, lo, hi = _rand("fp32", seed=20), _rand("fp32", seed=21) - 1, _rand("fp32", seed=22) + 1
    params = [tensor("x", SHAPE, "fp32"), tensor("lo", SHAPE, "fp32"), tensor("hi", SHAPE, "fp32")]
    for clip in (op("r", "clip", T("x"), min=V("l"), max=V("h")), op("r", "clip", T("x"), V("l"), V("h"))):
        p = prog(params, block(op("l", "clone", T("lo")), op("h", "clone", T("hi")), clip), Return((V("r"),)))
        torch.testing.assert_close(run_program(p, {"x": x, "lo": lo, "hi": hi}),
                                   torch.minimum(torch.maximum(x, lo), hi))


# -- the integer, bitwise and logical family (docs/semantics.md, "Integers and bits") -------------
INT_EDGES = [0, 1, -1, 7, -7, 2 ** 31 - 1, -(2 ** 31)]


def _edge_pairs():
    a = torch.tensor([x for x in INT_EDGES for y in INT_EDGES if y != 0], dtype=torch.int32).reshape(1, -1)
    b = torch.tensor([y for x in INT_EDGES for y in INT_EDGES if y != 0], dtype=torch.int32).reshape(1, -1)
    return a, b


@pytest.mark.parametrize("opcode,exact", [("floor_div", lambda x, y: x // y), ("ceil_div", lambda x, y: -((-x) // y)),
                                          ("remainder", lambda x, y: x % y)])
def test_integer_division_is_torchs_and_wraps(opcode, exact):
    """floor_div and ceil_div were unknown opcodes; like torch, INT_MIN // -1 wraps to INT_MIN."""
    a, b = _edge_pairs()
    got = run_binary(opcode, a, b, "int32")
    want = [(exact(x, y) + 2 ** 31) % 2 ** 32 - 2 ** 31 for x, y in zip(a.flatten().tolist(), b.flatten().tolist())]
    assert got.flatten().tolist() == want


@pytest.mark.parametrize("opcode,dtype", [("remainder", "int16"), ("remainder", "int32"), ("floor_div", "int32"),
                                          ("ceil_div", "int32")])
def test_integer_division_by_zero_is_an_error(opcode, dtype):
    with pytest.raises(InterpError, match=f"{opcode}: ValueError: integer division by zero"):
        run_binary(opcode, _rand(dtype), torch.zeros(SHAPE, dtype=TORCH[dtype]), dtype)


def test_gcd_shifts_and_copysign_are_torchs():
    a, b = _edge_pairs()
    assert torch.equal(run_binary("gcd", a, b, "int32"), torch.gcd(a, b))
    x = torch.tensor([[-32768, -300, -1, 0, 5, 32767] * 2], dtype=torch.int16)
    k = torch.tensor([[-1, 0, 3, 15, 16, 17, 1, 2, 14, -16, 20, 7]], dtype=torch.int16)
    for opcode in ("bitwise_left_shift", "bitwise_right_shift"):
        assert torch.equal(run_binary(opcode, x, k, "int16"), getattr(torch, opcode)(x, k))
    f = torch.tensor([[1.5, -2.0, 0.0, float("nan"), float("inf")]])
    s = torch.tensor([[-0.0, 3.0, -1.0, -1.0, -float("inf")]])
    assert torch.equal(torch.signbit(run_binary("copysign", f, s, "fp32")), torch.signbit(s))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32"])
def test_bitwise_ops_on_every_integer_width(dtype):
    """The op pages' A2 dtypes; torch has no bitwise_not for uint16 / uint32 (the same bits signed)."""
    g = torch.Generator().manual_seed(31)
    info = torch.iinfo(TORCH[dtype])
    a, b = (torch.randint(info.min, info.max + 1, SHAPE, generator=g, dtype=torch.int64).to(TORCH[dtype]) for _ in range(2))
    for opcode in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        assert torch.equal(run_binary(opcode, a, b, dtype), getattr(torch, opcode)(a, b))
    wide = a.to(torch.int64)
    want = ~wide if TORCH[dtype].is_signed else (1 << 8 * a.element_size()) - 1 - wide
    assert torch.equal(run_unary("bitwise_not", a, dtype).to(torch.int64), want)


def test_logical_and_takes_operands_of_different_dtypes():
    """logical_and's page allows mixed dtypes: each operand's truth (!= 0; NaN is true)."""
    x = torch.tensor([[0, 3, -2, 0, 5]], dtype=torch.int16)
    y = torch.tensor([[1.0, 0.0, float("nan"), -0.0, -1.5]])
    p = prog([tensor("a", (1, 5), "int16"), tensor("b", (1, 5), "fp32"), tensor("out", (1, 5), "bool", out=True)],
             block(op("r", "logical_and", T("a"), T("b")), assemble("r", "out", (0, 0))))
    out = torch.zeros(1, 5, dtype=torch.bool)
    run_program(p, {"a": x, "b": y, "out": out})
    assert out.tolist() == [[False, False, True, False, True]]
