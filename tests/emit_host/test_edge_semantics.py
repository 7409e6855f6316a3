"""Edge values on both backends: for every op the host emitter runs (vector.py's op set and the
cube matmul), on the dtypes each supports, the torch interpreter and the host build must give
the same numbers for NaN anywhere in a row, +-inf, +-0, denormals and values past a dtype's
range -- the cases docs/semantics.md writes down once.

One kernel per case (op, dtype, shape): a bounded set, each lowered and built once per process
(the build cache keeps the library between runs) and loaded once (HostLaunch); hypothesis picks
the case and draws the input VALUES: a background of one magnitude plus special values planted
at chosen columns (0, 3, 63 and the last of a 67-column row reach the vectorised paths and
their tails).

    HYPOTHESIS_PROFILE=long python -m pytest tests/emit_host/test_edge_semantics.py -p no:xdist

runs the property test 10,000 times (the quick profile: 60).
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from typing import Optional

import pytest
import torch
from hypothesis import given, note, settings
from hypothesis import strategies as st

from pypto_ast import live, pipeline
from pypto_ast.emit import ascendc
from pypto_ast.emit.errors import EmitError
from pypto_ast.emit.host_backend import HostLaunch
from pypto_ast.ir.interp import run_program

from support import needs_cxx

pytestmark = needs_cxx

R, C = 3, 67  # rows longer than 64: the fast float loops and the reductions' 16-lane scan, ragged
TILE_ROWS = 2  # two row tiles, the second one short
DT = {"fp32": "pypto.DT_FP32", "fp16": "pypto.DT_FP16", "int32": "pypto.DT_INT32", "bool": "pypto.DT_BOOL"}
TORCH_DT = {"fp32": torch.float32, "fp16": torch.float16, "int32": torch.int32, "bool": torch.bool}
DT["bf16"], TORCH_DT["bf16"] = "pypto.DT_BF16", torch.bfloat16


@dataclass(frozen=True)
class Case:
    """One kernel: ``out[:] = expr`` over the tensor parameters ``params`` ((name, shape, dtype)).

    ``exact``: the two backends must agree bit for bit (NaN payloads aside); otherwise within
    ``rtol`` of the interpreter's value (transcendental and composed functions: the host computes
    them with other polynomials; sums in another order), with NaN, +-inf and the sign of a zero
    still exact (but a matmul's, see ``disagreement``)."""

    name: str
    expr: str
    params: tuple
    out: tuple  # (shape, dtype)
    exact: bool = True
    rtol: float = 0.0
    magnitudes: tuple = ()  # background magnitudes to draw from (default: the dtype's)
    atol: float = 0.0  # an absolute error allowed besides rtol
    limit: float = math.inf  # the largest finite |value| drawn (the range the semantics covers)
    scale: str = ""  # "sum-1" / "sum0" / "matmul": rtol is relative to the sum of |terms| (the order differs)
    specials: tuple = ()  # the special values to plant (default: the dtype's)

    def source(self) -> str:
        args = [f"{n}: pypto.Tensor({list(s)}, {DT[d]})" for n, s, d in self.params]
        args.append(f"out: pypto.Tensor({list(self.out[0])}, {DT[self.out[1]]})")
        ident = "".join(ch if ch.isalnum() else "_" for ch in self.name)
        cube = "    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])\n" if "matmul" in self.name else ""
        return ("import pypto\n\n\n@pypto.frontend.jit\n"
                f"def edge_{ident}({', '.join(args)}):\n"
                f"{cube}    pypto.set_vec_tile_shapes({TILE_ROWS}, {C})\n"
                f"    out[:] = {self.expr}\n")


FULL = (R, C)
SIN_ATOL = 2e-7
ORDER_FREE = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0)  # no underflow
RTOL_POW = 2e-5  # exp(p * ln|x|): the rounding of p * ln|x| (up to ~100) is amplified by exp
APPROX = {"fp32": 4e-6, "fp16": 1e-3}  # a few fp32 ulps; one fp16 ulp (a rounding tie may flip)
APPROX["bf16"] = 8e-3  # one bf16 ulp


def _unary(name, expr, dtypes=("fp32", "fp16"), exact=True, out=None, rtol=0.0, magnitudes=(), **kw):
    return [Case(f"{name}/{d}", expr, (("x", FULL, d),), (FULL, out or d), exact,
                 0.0 if exact else max(rtol, APPROX[d]), magnitudes, **kw) for d in dtypes]


def _binary(name, expr, dtypes=("fp32", "fp16"), exact=True, out=None):
    return [Case(f"{name}/{d}", expr, (("x", FULL, d), ("y", FULL, d)), (FULL, out or d), exact,
                 0.0 if exact else APPROX[d]) for d in dtypes]


def _cases() -> list:
    cases = []
    for op in ("add", "sub", "mul", "maximum", "minimum"):
        cases += _binary(op, f"pypto.{op}(x, y)", ("fp32", "fp16", "int32"))
    cases += _binary("div", "pypto.div(x, y)")
    cases += _binary("add_alpha", "pypto.add(x, y, alpha=2.5)") + _binary("sub_alpha", "pypto.sub(x, y, alpha=0.75)")
    for name, expr in (("add_s", "x + 1.5"), ("sub_s", "x - 0.75"), ("rsub_s", "2.0 - x"), ("mul_s", "x * -3.0"),
                       ("mul_0", "x * 0.0"), ("div_s", "x / 3.0"), ("div_pow2", "x / 4.0"), ("rdiv_s", "2.0 / x"),
                       ("max_0", "pypto.maximum(x, 0.0)"), ("min_0", "pypto.minimum(x, 0.0)"),
                       ("max_s", "pypto.maximum(x, -1.5)"), ("min_s", "pypto.minimum(x, 2.5)"),
                       ("clip", "pypto.clip(x, -1.0, 2.0)")):
        cases += _unary(name, expr)
    # broadcasts: a value per row ([R, 1]) or one row for all ([1, C]) take other emission paths
    cases += _unary("div_row", "x / pypto.amax(x, -1, keepdim=True)")
    cases += _unary("sub_row", "x - pypto.amax(x, -1, keepdim=True)")
    cases += _unary("rsub_row", "pypto.amin(x, -1, keepdim=True) - x")
    cases += _unary("rdiv_row", "pypto.amin(x, -1, keepdim=True) / x")
    cases += _unary("max_row", "pypto.maximum(x, pypto.amin(x, -1, keepdim=True))")
    for op, expr in (("mul_col", "x * y"), ("div_col", "x / y"), ("min_col", "pypto.minimum(x, y)")):
        cases += [Case(f"{op}/{d}", expr, (("x", FULL, d), ("y", (1, C), d)), (FULL, d)) for d in ("fp32", "fp16")]
    for name, expr in (("add_s", "x + 7"), ("mul_s", "x * -3"), ("max_s", "pypto.maximum(x, -5)")):
        cases += _unary(name, expr, ("int32",))
    cases += _unary("neg", "-x", ("fp32", "fp16", "int32"))
    for op in ("abs", "relu", "reciprocal", "sign"):
        cases += _unary(op, f"pypto.{op}(x)")
    cases += _unary("sqrt", "pypto.sqrt(x)", exact=False)  # torch's AVX-512 sqrt is not correctly rounded
    cases += _unary("lrelu", "pypto.lrelu(x, 0.25)")
    for op in ("exp", "log", "rsqrt", "expm1", "log2", "log10", "log1p"):
        cases += _unary(op, f"pypto.{op}(x)", exact=False)
    cases += _unary("exp2", "pypto.exp2(x)", exact=False, rtol=RTOL_POW)  # exp(x * ln 2)
    cases += _unary("sigmoid", "pypto.sigmoid(x)", ("fp32",), exact=False)
    for op in ("sin", "cos"):  # accurate to an absolute 2e-7 for |x| <= 2^16 (docs/semantics.md)
        cases += _unary(op, f"pypto.{op}(x)", ("fp32",), exact=False, magnitudes=(1.0, 1e-3, 100.0, 1e4, 1e-39),
                        atol=SIN_ATOL, limit=2.0 ** 16)
    for op in ("floor", "ceil", "round", "trunc"):
        cases += _unary(op, f"pypto.{op}(x)", ("fp32",))
    for p in ("0", "2", "3", "-1", "-2"):
        cases += _unary(f"pow{p}", f"pypto.pow(x, {p})")
    for p in ("0.5", "-0.5"):  # Sqrt, Rsqrt: see sqrt
        cases += _unary(f"pow{p}", f"pypto.pow(x, {p})", exact=False)
    for p in ("1.5", "4", "5", "-3"):
        cases += _unary(f"pow{p}", f"pypto.pow(x, {p})", exact=False, rtol=RTOL_POW)
    cases += _unary("clone", "pypto.clone(x)")
    for op in ("gt", "ge", "lt", "le", "eq", "ne"):
        cases += _binary(op, f"pypto.{op}(x, y)", out="bool")
    cases += _unary("gt_s", "x > 0.0", out="bool")
    cases += _unary("eq_s", "pypto.eq(x, 1.0)", out="bool")
    cases += _binary("where", "pypto.where(x > y, x, y)")
    cases += _unary("where_s", "pypto.where(x < 0.0, 0.0, x)")
    for op in ("amax", "amin"):
        cases += [Case(f"{op}_row/{d}", f"pypto.{op}(x, -1, keepdim=True)", (("x", FULL, d),), ((R, 1), d))
                  for d in ("fp32", "fp16")]
        cases.append(Case(f"{op}_col/fp32", f"pypto.{op}(x, 0, keepdim=True)", (("x", FULL, "fp32"),), ((1, C), "fp32")))
    # sums and products: the summation order differs (a tree on the host), so the error is relative to
    # the sum of |x|, and no value is big enough for the order to decide an overflow
    for name, dim, shape in (("sum_row", -1, (R, 1)), ("sum_col", 0, (1, C))):
        cases.append(Case(f"{name}/fp32", f"pypto.sum(x, {dim}, keepdim=True)", (("x", FULL, "fp32"),), (shape, "fp32"),
                          False, APPROX["fp32"], limit=1e30, scale=f"sum{dim}"))
    cases.append(Case("prod_row/fp32", "pypto.prod(x, -1, keepdim=True)", (("x", FULL, "fp32"),), ((R, 1), "fp32"),
                      False, APPROX["fp32"], magnitudes=(1.0,), limit=10.0, specials=ORDER_FREE))
    cases += _unary("cast_f16", "pypto.cast(x, pypto.DT_FP16)", ("fp32",), out="fp16")
    cases.append(Case("cast_f16_row/fp32", "pypto.cast(pypto.amax(x, -1, keepdim=True), pypto.DT_FP16)",
                      (("x", FULL, "fp32"),), ((R, 1), "fp16")))
    cases += _unary("cast_f16_trunc", "pypto.cast(x, pypto.DT_FP16, pypto.CastMode.CAST_TRUNC)", ("fp32",), out="fp16")
    cases += _unary("cast_f32", "pypto.cast(x, pypto.DT_FP32)", ("fp16", "int32"), out="fp32")
    for mode in ("CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL"):
        cases += _unary(f"cast_i32_{mode[5:].lower()}", f"pypto.cast(x, pypto.DT_INT32, pypto.CastMode.{mode})",
                        ("fp32",), out="int32")
    cases += _unary("cast_i32_floor", "pypto.cast(x, pypto.DT_INT32, pypto.CastMode.CAST_FLOOR)", ("fp16",),
                    out="int32")
    for d, out in (("fp16", "fp16"), ("fp16", "fp32"), ("fp32", "fp32")):
        expr = "x @ y" if d == out else f"pypto.matmul(x, y, {DT[out]})"
        cases.append(Case(f"matmul/{d}->{out}", expr, (("x", (16, 32), d), ("y", (32, 16), d)), ((16, 16), out),
                          False, APPROX[out], magnitudes=(1.0, 1e-3, 100.0, 1e-39), limit=1e15, scale="matmul"))
    cases.append(Case("matmul_bias/fp16->fp32", 'pypto.matmul(x, y, pypto.DT_FP32, b_trans=True, extend_params={"bias_tensor": z})',
                      (("x", (16, 32), "fp16"), ("y", (16, 32), "fp16"), ("z", (1, 16), "fp32")), ((16, 16), "fp32"),
                      False, APPROX["fp32"], magnitudes=(1.0, 1e-3, 100.0), limit=1e15, scale="matmul"))
    cases += _bf16_cases() + _math_cases()
    return cases


def _bf16_cases() -> list:
    """bf16: every op computes in fp32 and rounds once (docs/semantics.md), so the exact fp32 ops stay
    exact after the rounding; the others may flip a rounding tie (one bf16 ulp)."""
    b = ("bf16",)
    cases = []
    for op in ("add", "sub", "mul", "maximum", "minimum", "div"):
        cases += _binary(op, f"pypto.{op}(x, y)", b)
    cases += _binary("add_alpha", "pypto.add(x, y, alpha=2.5)", b) + _binary("sub_alpha", "pypto.sub(x, y, alpha=0.75)", b)
    for name, expr in (("add_s", "x + 1.5"), ("sub_s", "x - 0.75"), ("rsub_s", "2.0 - x"), ("mul_s", "x * -3.0"),
                       ("mul_tenth", "x * 0.1"), ("div_s", "x / 3.0"), ("div_pow2", "x / 4.0"), ("rdiv_s", "2.0 / x"),
                       ("max_0", "pypto.maximum(x, 0.0)"), ("min_s", "pypto.minimum(x, 2.5)"),
                       ("clip", "pypto.clip(x, -1.0, 2.0)"), ("neg", "-x"), ("clone", "pypto.clone(x)"),
                       ("lrelu", "pypto.lrelu(x, 0.25)"), ("div_row", "x / pypto.amax(x, -1, keepdim=True)"),
                       ("sub_row", "x - pypto.amax(x, -1, keepdim=True)"), ("where_s", "pypto.where(x < 0.0, 0.0, x)"),
                       ("gt_s", "x > 0.0"), ("eq_s", "pypto.eq(x, 0.1)")):
        cases += _unary(name, expr, b, out="bool" if name in ("gt_s", "eq_s") else None)
    cases += [Case(f"{op}_col/bf16", expr, (("x", FULL, "bf16"), ("y", (1, C), "bf16")), (FULL, "bf16"))
              for op, expr in (("mul_col", "x * y"), ("div_col", "x / y"), ("min_col", "pypto.minimum(x, y)"))]
    for op in ("abs", "relu", "reciprocal", "sign", "floor", "ceil", "round", "trunc"):
        cases += _unary(op, f"pypto.{op}(x)", b)
    for p in ("0", "2", "3", "-1", "-2"):
        cases += _unary(f"pow{p}", f"pypto.pow(x, {p})", b)
    for op in ("sqrt", "exp", "log", "rsqrt", "expm1", "log2", "log10", "log1p", "exp2"):
        cases += _unary(op, f"pypto.{op}(x)", b, exact=False)
    for p in ("0.5", "1.5", "4", "-3"):
        cases += _unary(f"pow{p}", f"pypto.pow(x, {p})", b, exact=False)
    cases += _unary("sigmoid", "pypto.sigmoid(x)", ("fp16", "bf16"), exact=False)
    for op in ("gt", "ge", "lt", "le", "eq", "ne"):
        cases += _binary(op, f"pypto.{op}(x, y)", b, out="bool")
    cases += _binary("where", "pypto.where(x > y, x, y)", b)
    for op in ("amax", "amin"):
        cases.append(Case(f"{op}_row/bf16", f"pypto.{op}(x, -1, keepdim=True)", (("x", FULL, "bf16"),), ((R, 1), "bf16")))
    cases.append(Case("sum_row/bf16", "pypto.sum(x, -1, keepdim=True)", (("x", FULL, "bf16"),), ((R, 1), "bf16"),
                      False, APPROX["bf16"], limit=1e30, scale="sum-1"))
    cases += _unary("cast_bf16", "pypto.cast(x, pypto.DT_BF16)", ("fp32",), out="bf16")
    cases += _unary("cast_bf16_trunc", "pypto.cast(x, pypto.DT_BF16, pypto.CastMode.CAST_TRUNC)", ("fp32",), out="bf16")
    cases.append(Case("cast_bf16_row/fp32", "pypto.cast(pypto.amax(x, -1, keepdim=True), pypto.DT_BF16)",
                      (("x", FULL, "fp32"),), ((R, 1), "bf16")))
    cases += _unary("cast_f32", "pypto.cast(x, pypto.DT_FP32)", b, out="fp32")
    for mode in ("CAST_NONE", "CAST_RINT", "CAST_FLOOR"):
        cases += _unary(f"cast_i32_{mode[5:].lower()}", f"pypto.cast(x, pypto.DT_INT32, pypto.CastMode.{mode})", b,
                        out="int32")
    for out in ("bf16", "fp32"):
        expr = "x @ y" if out == "bf16" else "pypto.matmul(x, y, pypto.DT_FP32)"
        cases.append(Case(f"matmul/bf16->{out}", expr, (("x", (16, 32), "bf16"), ("y", (32, 16), "bf16")),
                          ((16, 16), out), False, APPROX[out], magnitudes=(1.0, 1e-3, 100.0, 1e-39), limit=1e15,
                          scale="matmul"))
    return cases


MATH_DTYPES = ("fp32", "fp16", "bf16")


def _math_cases() -> list:
    """The math functions: the host's APIs compute in double (or compose basic APIs, within 2 fp32 ulps),
    torch in fp32; fp16/bf16 round once from fp32 (docs/semantics.md, "Math functions")."""
    cases = []
    for op in ("erf", "erfc", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt"):
        cases += _unary(op, f"pypto.{op}(x)", MATH_DTYPES, exact=False)
    for op in ("atan2", "hypot", "pow"):
        cases += _binary(op, f"pypto.{op}(x, y)", MATH_DTYPES, exact=False)
    cases += _unary("hypot_s", "pypto.hypot(x, 2.0)", MATH_DTYPES, exact=False)
    cases += _unary("softmax", "pypto.softmax(x, -1)", MATH_DTYPES, exact=False)
    cases += _unary("softmax_col", "pypto.softmax(x, 0)", MATH_DTYPES, exact=False)
    cases += [Case(f"prelu/{d}", "pypto.prelu(x, w)", (("x", FULL, d), ("w", (C,), d)), (FULL, d)) for d in MATH_DTYPES]
    for op in ("sin", "cos"):  # in fp32, rounded once: one fp16 ulp, or the fp32 error's 2e-7
        cases += _unary(op, f"pypto.{op}(x)", ("fp16",), exact=False, atol=SIN_ATOL)
    return cases


CASES = {c.name: c for c in _cases()}


# ---- values -----------------------------------------------------------------------------------

def _specials(dtype: str) -> list:
    inf, nan = float("inf"), float("nan")
    common = [nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0]
    if dtype == "bf16":
        return common + [BF16_MAX, -BF16_MAX, 1.1754943508222875e-38, 2.0 ** -133, -1e-40, 3.4e38, 65504.0, 1e5,
                         88.7, 89.0, -87.3, -104.0, 1e30, 257.0, 2.0 ** -14, 1e-5, 0.999, 1.001]
    if dtype == "fp16":
        return common + [65504.0, -65504.0, 2.0 ** -14, -(2.0 ** -14), 2.0 ** -24, 3 * 2.0 ** -24, 1e-6, 11.0,
                         11.1, -17.4, 2048.0, 4097.0, 1e-3]
    return common + [3.4028234663852886e38, -3.4028234663852886e38, 1.1754943508222875e-38, 1e-45, 1e-40, -1e-40,
                     65504.0, 65519.99, 65520.0, -70000.0, 1e5, 2.0 ** 31, -(2.0 ** 31), 2147483520.0, 3e9, -3e9,
                     1e-5, 88.7, 89.0, -87.3, -104.0, 1e30, 16777217.0, 2.0 ** -14, 2.0 ** -25]


INT_SPECIALS = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 30, -(2 ** 30), 46341, -46341, 65535, 16777217, 7, -5]
MAGNITUDES = {"fp32": [1.0, 1e-3, 100.0, 1e4, 1e30, 1e-39], "fp16": [1.0, 1e-3, 30.0, 1e4, 1e-6],
              "int32": [10, 1000, 2 ** 20, 2 ** 31]}
MAGNITUDES["bf16"] = [1.0, 1e-3, 100.0, 1e4, 1e30, 1e-39]
BF16_MAX = 3.3895313892515355e38
COLUMNS = [0, 1, 3, 7, 8, 15, 16, 31, 32, 63, 64, C - 1]


@st.composite
def tensor_values(draw, shape: tuple, dtype: str, magnitudes: tuple = (), base=None, limit=math.inf,
                  planted: tuple = ()) -> torch.Tensor:
    """A background of one magnitude (seeded torch values; or a copy of ``base``) with special
    values planted in it."""
    rows, cols = shape if len(shape) == 2 else (1, shape[0])
    if base is not None:
        t = base.clone()
    elif dtype == "int32":
        g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
        bound = draw(st.sampled_from(MAGNITUDES["int32"]))
        t = torch.randint(-bound, bound, shape, generator=g, dtype=torch.int64).to(torch.int32)
    else:
        g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
        scale = draw(st.sampled_from(list(magnitudes or MAGNITUDES[dtype])))
        t = (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(TORCH_DT[dtype])
    specials = st.sampled_from(INT_SPECIALS if dtype == "int32" else
                               [v for v in (planted or _specials(dtype)) if not abs(v) > limit])
    column = st.one_of(st.sampled_from([c for c in COLUMNS if c < cols]), st.integers(0, cols - 1))
    for row, col, value in draw(st.lists(st.tuples(st.integers(0, rows - 1), column, specials), max_size=10)):
        t[(row, col) if len(shape) == 2 else col] = value
    return t


@st.composite
def examples(draw, cases: list):
    """A case and its input values; a second operand is sometimes the first one with a few
    elements changed (equal operands: comparisons, max/min of equal values, x - x)."""
    case = CASES[draw(st.sampled_from(cases))]
    values = {}
    for name, shape, dtype in case.params:
        same = name == "y" and case.params[0][1] == shape and draw(st.booleans())
        values[name] = draw(tensor_values(shape, dtype, case.magnitudes, values["x"] if same else None, case.limit,
                                          case.specials))
    return case, values


# ---- running a case on both backends ------------------------------------------------------------

_BUILT: dict = {}


def _program(case: Case):
    """The case's program and its loaded host library (lowered and built once per process)."""
    if case.name not in _BUILT:
        ident = "".join(ch if ch.isalnum() else "_" for ch in case.name)
        with tempfile.TemporaryDirectory(prefix="pypto-edge-") as tmp:
            path = os.path.join(tmp, f"edge_{ident}.py")  # its name is in the #line text: the build cache key
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(case.source())
            program = pipeline.lower(live.find_kernel(live.load_module(path)))
        names = [p.name for p in program.params]
        launch = HostLaunch.build(program, ascendc.emit_program(program), names)
        _BUILT[case.name] = (program, launch, names)
    return _BUILT[case.name]


def run_both(case: Case, values: dict) -> tuple:
    """(host result, interp result) of ``out`` for the given inputs."""
    program, launch, names = _program(case)
    shape, dtype = case.out
    results = []
    for backend in ("host", "interp"):
        args = {n: v.clone() for n, v in values.items()}
        args["out"] = torch.zeros(shape, dtype=TORCH_DT[dtype])
        if backend == "host":
            launch.launch([args[n] for n in names])
        else:
            run_program(program, args)
        results.append(args["out"])
    return tuple(results)


def disagreement(case: Case, host: torch.Tensor, interp: torch.Tensor, values: Optional[dict] = None):
    """None, or a description of the first element where the backends differ (``values``: the
    inputs, which a sum's tolerance scales with)."""
    if host.dtype != interp.dtype or host.shape != interp.shape:
        return f"dtype/shape {host.dtype}{list(host.shape)} vs {interp.dtype}{list(interp.shape)}"
    if not host.is_floating_point():
        bad = host != interp
    else:
        h, i = host.double(), interp.double()
        nan_h, nan_i = h.isnan(), i.isnan()
        same_special = (h == i) & (torch.signbit(h) == torch.signbit(i))
        if case.exact:
            bad = (nan_h != nan_i) | (~nan_h & ~nan_i & ~same_special)
        else:  # within rtol, or the smallest normal number of each other (denormal results)
            tiny = torch.finfo(host.dtype).tiny
            scale = i.abs()
            if case.scale and values is not None:  # a sum in another order: relative to the sum of |terms|
                x = values["x"].double().abs()
                if case.scale == "matmul":  # |x| @ |y| (y stored [n, k] with a bias), + |bias|
                    y = values["y"].double().abs()
                    terms = x @ (y.T if "z" in values else y) + (values["z"].double().abs() if "z" in values else 0)
                else:
                    terms = x.sum(int(case.scale[3:]), keepdim=True)
                scale = torch.maximum(scale, terms)
            close = h.isfinite() & i.isfinite() & ((h - i).abs() <= case.rtol * scale + max(tiny, case.atol))
            # a zero matmul result has the sign of its exact sum on the host (products and sums in
            # double), which torch's fp32 products may have flushed: unspecified (docs/semantics.md)
            zeros_differ = (h == 0) & (i == 0) & (torch.signbit(h) != torch.signbit(i)) & (case.scale != "matmul")
            bad = (nan_h != nan_i) | (~nan_h & ~nan_i & ~(same_special | close)) | zeros_differ
    if not bool(bad.any()):
        return None
    where = [tuple(ix) for ix in bad.nonzero().tolist()[:4]]
    return "; ".join(f"at {ix}: host {host[ix].item()!r} interp {interp[ix].item()!r}" for ix in where)


def check(case: Case, values: dict) -> None:
    host, interp = run_both(case, values)
    problem = disagreement(case, host, interp, values)
    if problem:
        inputs = "; ".join(f"{n}{list(v.shape)}" for n, v in values.items())
        raise AssertionError(f"{case.name}: host and interp disagree {problem}\ninputs {inputs}")


# ---- named cases -------------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
NAN_COLUMNS = (0, 3, 63, C - 1)  # the vectorised scans' first lane, inside, the last full step, the tail


def _filled(case: Case, value: float = 1.0) -> dict:
    return {n: torch.full(shape, value, dtype=TORCH_DT[d]) for n, shape, d in case.params}


def _host_and_interp(key: str, values: dict) -> torch.Tensor:
    """The host's result, checked equal to the interpreter's (docs/semantics.md)."""
    case = CASES[key]
    host, interp = run_both(case, values)
    problem = disagreement(case, host, interp, values)
    assert problem is None, f"{key}: host and interp disagree {problem}"
    return host


def _bits_equal(got: torch.Tensor, want: list) -> bool:
    want = torch.tensor(want, dtype=got.dtype).expand_as(got)
    same = (got == want) & (torch.signbit(got) == torch.signbit(want))
    return bool((same | (got.isnan() & want.isnan())).all())


@pytest.mark.parametrize("key", ["amax_row/fp32", "amin_row/fp32", "amax_row/fp16", "amin_row/fp16"])
@pytest.mark.parametrize("column", NAN_COLUMNS)
def test_row_max_and_min_are_nan_wherever_the_nan_is(key, column):
    """A row amax/amin was NaN on the host only when the NaN sat in column 0 (the runtime's
    ReduceMax kept the first element's NaN and skipped later ones); NaN propagates, as in torch."""
    values = _filled(CASES[key])
    values["x"][:, column] = NAN
    values["x"][1, 5] = -2.0 if key.startswith("amax") else 2.0  # a row whose extreme is elsewhere
    assert _host_and_interp(key, values).isnan().all()


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_relu_of_nan_is_nan_like_maximum_with_zero(dtype):
    """relu(NaN) gave 0 on the host while maximum(NaN, 0) gave NaN: relu is maximum(x, 0), NaN
    stays NaN (torch), and relu(-0) is +0 like maximum(-0, 0)."""
    for key in (f"relu/{dtype}", f"max_0/{dtype}"):
        values = _filled(CASES[key], -1.0)
        for column in NAN_COLUMNS:
            values["x"][column % R, column] = NAN
        values["x"][1, 10] = -0.0
        got = _host_and_interp(key, values)
        assert int(got.isnan().sum()) == len(NAN_COLUMNS)
        assert got[1, 10] == 0 and not torch.signbit(got[1, 10])


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_maximum_and_minimum_order_minus_zero_below_plus_zero(dtype):
    """The sign of a zero from maximum/minimum depended on the code path in torch (the vectorised
    kernel returns the other operand) and on the operand order on the host: -0 < +0 (IEEE 754)."""
    x = [0.0, -0.0, 0.0, -0.0]
    y = [0.0, 0.0, -0.0, -0.0]
    for op, want in (("maximum", [0.0, 0.0, 0.0, -0.0]), ("minimum", [0.0, -0.0, -0.0, -0.0])):
        case = CASES[f"{op}/{dtype}"]
        values = {"x": torch.tensor(x * (R * C // 4 + 1))[:R * C].reshape(R, C).to(TORCH_DT[dtype]),
                  "y": torch.tensor(y * (R * C // 4 + 1))[:R * C].reshape(R, C).to(TORCH_DT[dtype])}
        got = _host_and_interp(case.name, values).flatten()
        assert _bits_equal(got[:4 * (R * C // 4)].reshape(-1, 4), want), (op, got[:8].tolist())


def test_fp32_to_fp16_cast_saturates_finite_overflow():
    """pypto's default for fp32 -> fp16 is to saturate: the interpreter clamped to +-65504, the host
    emitted a bare Cast(..., CAST_NONE), which overflows to inf; the kernel now clamps first.
    +-inf and NaN are no overflow and stay."""
    x = [65519.99, 65520.0, 1e6, -1e6, 3.4e38, INF, -INF, NAN, 65504.0, -0.0]
    want = [65504.0, 65504.0, 65504.0, -65504.0, 65504.0, INF, -INF, NAN, 65504.0, -0.0]
    values = _filled(CASES["cast_f16/fp32"])
    for row in range(R):
        values["x"][row, 60:] = torch.tensor(x[:C - 60])  # columns 60..66: the last 64-lane step and the tail
        values["x"][row, :len(x)] = torch.tensor(x)
    got = _host_and_interp("cast_f16/fp32", values)
    assert _bits_equal(got[:, :len(x)], want) and _bits_equal(got[:, 60:], want[:C - 60]), got[0].tolist()
    # a per-row value ([rows, 1], cast row by row)
    values = _filled(CASES["cast_f16_row/fp32"])
    values["x"][:, 7] = torch.tensor([65519.99, -1e6, INF])
    assert _bits_equal(_host_and_interp("cast_f16_row/fp32", values), [[65504.0], [1.0], [INF]])


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "trunc"])
def test_rounding_to_an_integer_keeps_the_sign_of_zero(op):
    """floor(-0.0) was +0 on the host (the runtime's Cast float -> float rebuilt the sign from
    x < 0): rounding to an integral value keeps the sign, -0 and -0.3 give -0 (IEEE, torch)."""
    x = torch.tensor([-0.0, 0.0, -0.3, 0.3, -0.5, -0.7, -1.5, 2.5, INF, -INF, NAN])
    values = _filled(CASES[f"{op}/fp32"])
    values["x"][:, 50:50 + len(x)] = x
    values["x"][:, :len(x)] = x
    got = _host_and_interp(f"{op}/fp32", values)
    want = getattr(torch, op)(x).tolist()
    assert _bits_equal(got[:, :len(x)], want) and _bits_equal(got[:, 50:50 + len(x)], want)


def test_directed_rounding_to_fp16_keeps_the_sign_of_zero():
    """fp32 -> fp16 with CAST_TRUNC of -1e-8 gave +0 in the interpreter (its rounding walks a
    monotone integer key, whose 0 is +0) and -0 on the host: the result keeps the sign of x."""
    x = torch.tensor([-1e-8, 1e-8, -3e-8, -0.0, -1e-40, 2.0 ** -24 * 1.5, -(2.0 ** -24) * 1.5])
    values = _filled(CASES["cast_f16_trunc/fp32"])
    values["x"][:, :len(x)] = x
    got = _host_and_interp("cast_f16_trunc/fp32", values)
    assert _bits_equal(got[:, :len(x)], [-0.0, 0.0, -0.0, -0.0, -0.0, 2.0 ** -24, -(2.0 ** -24)])


@pytest.mark.parametrize("p", ["2", "3", "-1"])
def test_pow_with_a_scalar_exponent_is_what_torch_computes_for_x_to_the_p(p):
    """pow(x, 2) differed from torch's x ** 2 in the last bit: the interpreter passed the exponent
    as a 0-d tensor, which takes torch's generic pow; with a Python number torch computes x * x
    (x * x * x, 1 / x), as the host's Mul / Reciprocal do."""
    g = torch.Generator().manual_seed(int(p) + 7)
    values = {"x": torch.randn(R, C, generator=g) * 10}
    got = _host_and_interp(f"pow{p}/fp32", values)
    assert _bits_equal(got, (values["x"] ** float(p)).tolist())


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_lrelu_keeps_minus_zero_and_nan(dtype):
    """lrelu(-0) was +0 on the host (max(x, 0) + slope * min(x, 0) adds two zeros) and -0 in the
    interpreter and torch (x >= 0 ? x : slope * x): the host selects now."""
    x = torch.tensor([-0.0, 0.0, NAN, -INF, INF, -2.0, 3.0, -1e-3])
    values = _filled(CASES[f"lrelu/{dtype}"])
    values["x"][:, C - len(x):] = x
    got = _host_and_interp(f"lrelu/{dtype}", values)
    want = torch.nn.functional.leaky_relu(x.to(TORCH_DT[dtype]).float(), 0.25).to(TORCH_DT[dtype])
    assert _bits_equal(got[:, C - len(x):], want.tolist())


@pytest.mark.parametrize("key", ["div_s/fp32", "div_s/fp16", "div_row/fp32", "div_row/fp16"])
def test_division_by_a_scalar_is_a_division(key):
    """x / 3.0 was x * (1 / 3.0) on the host, an ulp off in fp32 and worse in fp16 (the reciprocal
    rounded to half); a divisor per row likewise: the kernel divides (Duplicate + Div) unless the
    reciprocal is an exact power of two."""
    g = torch.Generator().manual_seed(3)
    values = {"x": (torch.randn(R, C, generator=g) * 100).to(TORCH_DT[CASES[key].params[0][2]])}
    got = _host_and_interp(key, values)
    x = values["x"]
    divisor = 3.0 if key.startswith("div_s") else x.amax(-1, keepdim=True)
    assert _bits_equal(got, (x / divisor).tolist())


@pytest.mark.parametrize("p", ["0", "1.5", "4", "5", "-3"])
def test_pow_of_negative_zero_infinite_and_nan_bases(p):
    """The host computed every other exponent as exp(p * ln x): NaN for any x < 0 (pow(-2, 4) is
    16), for x ** 0 (1 in torch, NaN included) and for pow(-inf, 1.5) (+inf)."""
    x = torch.tensor([-0.0, 0.0, -INF, INF, NAN, -2.0, 2.0, 1.0, -1.0, -0.5, 3e-20, -7e11])
    values = _filled(CASES[f"pow{p}/fp32"])
    values["x"][:, 2:2 + len(x)] = x
    got = _host_and_interp(f"pow{p}/fp32", values)[0, 2:2 + len(x)]
    want = torch.pow(x, float(p))
    special = ~want.isfinite() | (want == 0) | (x.abs() == 1)
    assert _bits_equal(got[special], want[special].tolist()), (got.tolist(), want.tolist())
    torch.testing.assert_close(got[~special], want[~special], rtol=RTOL_POW, atol=0)


@pytest.mark.parametrize("key", ["exp2/fp16", "log2/fp16", "log10/fp16", "pow3/fp16", "pow-2/fp16", "pow1.5/fp16",
                                 "pow4/fp16"])
def test_fp16_composed_ops_round_once(key):
    """exp2(11.1) in fp16 was 2206 on the host and 2198 in torch: the host's Muls(x, ln 2) rounded
    x * ln 2 to half before the Exp; every fp16 op computes in fp32 and rounds once."""
    g = torch.Generator().manual_seed(11)
    x = (torch.rand(R, C, generator=g) * 30 - 10).half()
    if key.startswith("log") or key.startswith("pow1.5"):
        x = x.abs() + 0.01
    got = _host_and_interp(key, {"x": x})
    torch.testing.assert_close(got.float(), _torch_result(key, x).float(), rtol=CASES[key].rtol, atol=0)


def _torch_result(key: str, x: torch.Tensor) -> torch.Tensor:
    """What torch computes for the case (fp16 ops in fp32, rounded once)."""
    name = key.split("/")[0]
    f = x.float()
    if name.startswith("pow"):
        return (f ** float(name[3:])).half()
    return getattr(torch, name)(f).half()


@pytest.mark.parametrize("key", ["expm1/fp32", "log1p/fp32", "expm1/fp16", "log1p/fp16"])
def test_expm1_and_log1p_keep_their_digits_near_zero(key):
    """expm1(1e-10) was 0 on the host (exp(x) - 1) and log1p(1e-10) too (ln(1 + x)): those
    functions exist for small x. Kahan's forms keep them within a few ulps, and the ends right."""
    tiny = [1e-10, -1e-10, 1e-5, -3e-4, 2e-30, 1e-40, -0.0, 0.0] if key.endswith("fp32") else [1e-6, -2e-7, 1e-3, -3e-4, -0.0]
    x = torch.tensor(tiny + [0.7, -0.9, 20.0, -30.0, 1e30, -1e30, INF, -INF, NAN, -1.0, -1.5]).to(TORCH_DT[key[-4:]])
    values = _filled(CASES[key])
    values["x"][:, 5:5 + len(x)] = x
    got = _host_and_interp(key, values)[0, 5:5 + len(x)].double()
    want = getattr(torch, key.split("/")[0])(x.double()).to(x.dtype).double()
    finite = want.isfinite() & (want != 0)
    assert _bits_equal(got[~finite], want[~finite].tolist()), (got.tolist(), want.tolist())
    torch.testing.assert_close(got[finite], want[finite], rtol=APPROX[key[-4:]], atol=0)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_sin_and_cos_reduce_exactly_up_to_2_to_the_16(op):
    """The host reduced x by a two-part 2 pi through an int32 k: sin(45149.5) was off by 1e-4,
    sin(1e30) was -4e21 (k saturated). Now: an absolute 2e-7 for |x| <= 2^16, NaN for +-inf,
    sin(-0) = -0, and past 2^16 a value in [-1, 1] (docs/semantics.md: accuracy ends there)."""
    g = torch.Generator().manual_seed(5)
    x = (torch.rand(R, C, generator=g, dtype=torch.float64) * 2 - 1) * 2.0 ** 16
    x[0, :8] = torch.tensor([0.0, -0.0, INF, -INF, NAN, 1e-30, math.pi / 2, 45149.4921875], dtype=torch.float64)
    x[1, :4] = torch.tensor([1e6, -1e30, 3.4e38, 2.0 ** 16 + 0.5], dtype=torch.float64)
    x = x.float()
    case = CASES[f"{op}/fp32"]
    host, interp = run_both(case, {"x": x})
    assert _bits_equal(host[0, :5], getattr(torch, op)(x[0, :5]).tolist())
    assert bool((host[1, :3].abs() <= 1.0).all()), host[1, :3].tolist()
    accurate = x.abs() <= 2.0 ** 16
    accurate[0, 2:5] = False
    error = (host.double() - getattr(torch, op)(x.double())).abs()[accurate]
    assert float(error.max()) <= SIN_ATOL, float(error.max())
    assert disagreement(case, host[accurate], interp[accurate]) is None


@pytest.mark.parametrize("key", ["sum_row/fp32", "sum_col/fp32"])
def test_a_sum_of_negative_zeros_is_plus_zero(key):
    """A row of -0s summed to -0 on the host (its tree adds -0 + -0) and to +0 in torch, whose sum
    starts from +0; the host's ReduceSum now starts from +0 too (the column sum already did)."""
    values = _filled(CASES[key], -0.0)
    pair = torch.tensor([1e-45, -1e-45])  # cancelling to zero: the sign comes from the rounding mode
    if key.startswith("sum_row"):
        values["x"][1, :2] = pair
    else:
        values["x"][:2, 1] = pair
    got = _host_and_interp(key, values)
    assert _bits_equal(got, [0.0])


# ---- the property ------------------------------------------------------------------------------

def _max_examples() -> int:
    """The profile's count (quick: 60), and 10,000 with HYPOTHESIS_PROFILE=long."""
    return 10_000 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else settings().max_examples


@settings(max_examples=_max_examples(), deadline=None)
@given(example=examples(sorted(CASES)))
def test_host_and_interp_agree_on_edge_values(example):
    """Every case, on values drawn to hit NaN anywhere in a row, +-inf, +-0, denormals and values
    past the dtype's range: the host computes what the interpreter computes (docs/semantics.md)."""
    case, values = example
    note(case.source())
    for name, v in values.items():
        note(f"{name} = {v.tolist()}")
    check(case, values)


@pytest.mark.parametrize("key", ["add_alpha/fp32", "sub_alpha/fp32", "add_alpha/fp16", "sub_alpha/fp16"])
def test_add_with_alpha_rounds_once(key):
    """add(x, y, alpha=2.5) was Muls then Add on the host: two roundings (in half for fp16), where
    the interpreter rounds x + alpha * y once (torch's fused kernel). The host Axpys now."""
    g = torch.Generator().manual_seed(2)
    dt = TORCH_DT[CASES[key].params[0][2]]
    values = {"x": (torch.randn(R, C, generator=g) * 100).to(dt), "y": (torch.randn(R, C, generator=g) * 100).to(dt)}
    got = _host_and_interp(key, values)
    k = 2.5 if key.startswith("add") else -0.75
    once = (values["x"].double() + k * values["y"].double()).float().to(dt)
    assert _bits_equal(got, once.tolist())


SATURATING_CAST = '''
import pypto


@pypto.frontend.jit
def to_half(x: pypto.Tensor([4, 64], pypto.DT_FP32), out: pypto.Tensor([4, 64], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = pypto.cast(x, pypto.DT_FP16)


def example_inputs():
    import torch
    x = torch.linspace(-1e5, 1e5, 256).reshape(4, 64)
    return {"x": x, "out": torch.zeros(4, 64, dtype=torch.float16)}


def reference(x, out):
    return {"out": x.clamp(-65504, 65504).half()}  # pypto's default for fp32 -> fp16: saturate
'''


@pytest.mark.parametrize("backend", ["interp", "host"])
def test_run_of_a_saturating_cast_matches_on_both_backends(tmp_path, backend):
    """`--run` said ok on interp and mismatch on host for pypto.cast(x, DT_FP16) of values past
    65504: both now saturate, as pypto's cast page says for this pair."""
    from pypto_ast.runner import run_and_compare

    path = tmp_path / "to_half.py"
    path.write_text(SATURATING_CAST)
    module = live.load_module(str(path))
    lines: list = []
    code = run_and_compare(module, live.find_kernel(module), module.example_inputs(), backend=backend,
                           echo=lines.append)
    assert code == 0, "\n".join(lines)


def test_a_wrapping_cast_to_int32_is_refused_on_the_host(tmp_path):
    """satmode OFF (wrap) on fp32 -> int32: the A2 Cast clamps, so the host refuses the kernel with a
    located error instead of computing other numbers than the interpreter."""
    path = tmp_path / "wrap.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    "def wrap(x: pypto.Tensor([4, 64], pypto.DT_FP32), out: pypto.Tensor([4, 64], pypto.DT_INT32)):\n"
                    "    pypto.set_vec_tile_shapes(4, 64)\n"
                    "    out[:] = pypto.cast(x, pypto.DT_INT32, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.OFF)\n")
    program = pipeline.lower(live.find_kernel(live.load_module(str(path))))
    with pytest.raises(EmitError, match="satmode OFF") as caught:
        ascendc.emit_program(program)
    assert caught.value.span is not None and caught.value.span.line == 7
