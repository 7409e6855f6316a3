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
from pypto_ast.emit.errors import UNSUPPORTED, EmitError
from pypto_ast.emit.host_backend import HostLaunch
from pypto_ast.ir.interp import run_program

from support import needs_cxx

pytestmark = needs_cxx

R, C = 3, 67  # rows longer than 64: the fast float loops and the reductions' 16-lane scan, ragged
TILE_ROWS = 2  # two row tiles, the second one short
DT = {"fp32": "pypto.DT_FP32", "fp16": "pypto.DT_FP16", "int32": "pypto.DT_INT32", "bool": "pypto.DT_BOOL",
      "int64": "pypto.DT_INT64"}
TORCH_DT = {"fp32": torch.float32, "fp16": torch.float16, "int32": torch.int32, "bool": torch.bool,
            "int64": torch.int64}
INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32")  # the integer family's dtypes (emit/vector_int.py)
DT.update({d: f"pypto.DT_{d.upper()}" for d in INTS})
TORCH_DT.update({d: getattr(torch, d) for d in INTS})
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
    nonzero: str = ""  # a parameter drawn without zeros (a divisor: a zero faults, test_integer_division_by_zero)
    quotient: float = math.inf  # elements with |x / y| at or past this are outside the semantics (fmod: 2^24)
    scale: str = ""  # "sum-1" / "sum0" / "matmul": rtol is relative to the sum of |terms| (the order differs)
    specials: tuple = ()  # the special values to plant (default: the dtype's)
    indices: tuple = ()  # (param, bound): an index operand, drawn in [0, bound) with both ends planted

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
    # an integer input gives an fp32 result (the op page), widened to fp32 first
    cases += [Case(f"exp2/{d}", "pypto.exp2(x)", (("x", FULL, d),), (FULL, "fp32"), False, max(RTOL_POW, APPROX["fp32"]))
              for d in ("int8", "uint8", "int16", "int32")]
    cases += _unary("sigmoid", "pypto.sigmoid(x)", ("fp32",), exact=False)
    for op in ("sin", "cos"):  # accurate to an absolute 2e-7 for |x| <= 2^16 (docs/semantics.md)
        cases += _unary(op, f"pypto.{op}(x)", ("fp32",), exact=False, magnitudes=(1.0, 1e-3, 100.0, 1e4, 1e-39),
                        atol=SIN_ATOL, limit=2.0 ** 16)
    for op in ("floor", "ceil", "round", "trunc"):
        cases += _unary(op, f"pypto.{op}(x)", ("fp32",))
    for d in (1, 3, -1, -2):  # torch: rint(x * 10^d) / 10^d in fp32 (10^-d for d < 0)
        cases += _unary(f"round_d{d}", f"pypto.round(x, decimals={d})", ("fp32",))
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
    # int32 -> fp16 (emit/decompose.py: through an exact fp32 step): rounding past 2048, overflow past 65504
    for mode in ("CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC"):
        cases += _unary(f"cast_f16_{mode[5:].lower()}", f"pypto.cast(x, pypto.DT_FP16, pypto.CastMode.{mode})",
                        ("int32",), out="fp16")
    for d, out in (("fp16", "fp16"), ("fp16", "fp32"), ("fp32", "fp32")):
        expr = "x @ y" if d == out else f"pypto.matmul(x, y, {DT[out]})"
        cases.append(Case(f"matmul/{d}->{out}", expr, (("x", (16, 32), d), ("y", (32, 16), d)), ((16, 16), out),
                          False, APPROX[out], magnitudes=(1.0, 1e-3, 100.0, 1e-39), limit=1e15, scale="matmul"))
    cases += _index_cases()
    cases.append(Case("matmul_bias/fp16->fp32", 'pypto.matmul(x, y, pypto.DT_FP32, b_trans=True, extend_params={"bias_tensor": z})',
                      (("x", (16, 32), "fp16"), ("y", (16, 32), "fp16"), ("z", (1, 16), "fp32")), ((16, 16), "fp32"),
                      False, APPROX["fp32"], magnitudes=(1.0, 1e-3, 100.0), limit=1e15, scale="matmul"))
    cases += _bf16_cases() + _math_cases()
    return cases + _integer_cases() + _quant_cases()


def _quant_cases() -> list:
    """quantize / dequantize per row and per column, int8 matmul (docs/semantics.md "Quantization")."""
    row, col = ("s", (R,), "fp32"), ("s", (C,), "fp32")
    return [
        Case("quantize/fp32->int8", "pypto.quantize(x, s, pypto.DT_INT8, -1)", (("x", FULL, "fp32"), row), (FULL, "int8")),
        Case("quantize/fp32->uint8", "pypto.quantize(x, s, pypto.DT_UINT8, -2, z)",
             (("x", FULL, "fp32"), col, ("z", (C,), "fp32")), (FULL, "uint8")),
        Case("quantize_row/fp32->uint8", "pypto.quantize(x, s, pypto.DT_UINT8, 1, z)",
             (("x", FULL, "fp32"), row, ("z", (R,), "fp32")), (FULL, "uint8")),
        Case("dequantize/int8->fp32", "pypto.dequantize(x, s, pypto.DT_FP32, -1, z)",
             (("x", FULL, "int8"), row, ("z", (R,), "fp32")), (FULL, "fp32")),
        Case("dequantize/int16->fp32", "pypto.dequantize(x, s, pypto.DT_FP32, -2)", (("x", FULL, "int16"), col),
             (FULL, "fp32")),
        Case("matmul/int8->int32", "pypto.matmul(x, y, pypto.DT_INT32)", (("x", (16, 40), "int8"), ("y", (40, 16), "int8")),
             ((16, 16), "int32")),
    ]


def _integer_cases() -> list:
    """The integer, bitwise and logical family (emit/vector_int.py; docs/semantics.md, "Integers and bits")."""
    cases = []
    for op in ("add", "sub", "mul", "maximum", "minimum"):
        cases += _binary(op, f"pypto.{op}(x, y)", ("int16",))
    cases += _unary("neg", "-x", ("int16",))
    cases += _unary("max_full", f"pypto.maximum(x, pypto.full([{R}, {C}], -7, pypto.DT_INT16))", ("int16",))
    for op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        cases += _binary(op, f"pypto.{op}(x, y)", INTS)
    cases += _unary("bitwise_and_s", "pypto.bitwise_and(x, 255)", ("int16", "uint8"))
    cases += _unary("bitwise_or_s", "pypto.bitwise_or(x, 6)", ("int32", "int8"))
    cases += _unary("bitwise_xor_s", "pypto.bitwise_xor(x, -3)", ("int16", "int32"))
    cases += _unary("bitwise_not", "pypto.bitwise_not(x)", INTS + ("bool",))
    for op in ("bitwise_left_shift", "bitwise_right_shift"):
        cases += _binary(op, f"pypto.{op}(x, y)", ("int16",))
        for k in (3, 20):
            cases += _unary(f"{op}_{k}", f"pypto.{op}(x, {k})", ("int16",))
    for d, ops in (("int16", ("remainder",)), ("int32", ("remainder", "floor_div", "ceil_div"))):
        cases += [Case(f"{op}/{d}", f"pypto.{op}(x, y)", (("x", FULL, d), ("y", FULL, d)), (FULL, d), nonzero="y")
                  for op in ops]
    cases += _unary("remainder_s", "x % 3", ("int16",)) + _unary("remainder_s", "pypto.remainder(x, -7)", ("int32",))
    cases += _unary("floor_div_s", "pypto.floor_div(x, -3)", ("int32",))
    cases += _unary("ceil_div_s", "pypto.ceil_div(x, 5)", ("int32",))
    cases.append(Case("gcd/int32", "pypto.gcd(x, y)", (("x", FULL, "int32"), ("y", FULL, "int32")), (FULL, "int32")))
    cases += _unary("gcd_s", "pypto.gcd(x, 6)", ("int32",))
    for op in ("fmod", "remainder"):  # exact while |x / y| < 2^24 (docs/semantics.md)
        cases += [Case(f"{op}/{d}", f"pypto.{op}(x, y)", (("x", FULL, d), ("y", FULL, d)), (FULL, d), quotient=2.0 ** 24)
                  for d in ("fp32", "fp16")]
    small = dict(magnitudes=(1.0, 1e-3, 100.0, 1e4, 1e-39), limit=2.0 ** 24)  # |x / 2.5|, |x / 7| < 2^24
    cases += _unary("remainder_fs", "x % 2.5", **small) + _unary("fmod_s", "pypto.fmod(x, -7.0)", **small)
    cases += _unary("rremainder_s", "3.25 % x", ("fp32",), magnitudes=(1.0, 100.0, 1e4), specials=ORDER_FREE)
    cases += _binary("copysign", "pypto.copysign(x, y)") + _unary("copysign_s", "pypto.copysign(x, -0.0)")
    cases += _unary("signbit", "pypto.signbit(x)", ("fp32", "fp16", "int8", "int16", "int32"), out="bool")
    cases += _unary("isfinite", "pypto.isfinite(x)", ("fp32", "fp16", "int16", "int32"), out="bool")
    cases += _unary("logical_not", "pypto.logical_not(x)", ("fp32", "fp16", "bool") + INTS, out="bool")
    cases += _binary("logical_and", "pypto.logical_and(x, y)", ("fp32", "bool", "int16"), out="bool")
    cases.append(Case("logical_and/int16,fp32", "pypto.logical_and(x, y)", (("x", FULL, "int16"), ("y", FULL, "fp32")),
                      (FULL, "bool")))
    cases += _binary("greater", "pypto.greater(x, y)", out="bool") + _unary("greater_s", "pypto.greater(x, 0.5)", out="bool")
    cases.append(Case("where_bool/fp32", "pypto.where(c, x, y)", (("c", FULL, "bool"), ("x", FULL, "fp32"),
                                                                 ("y", FULL, "fp32")), (FULL, "fp32")))
    return cases


def _index_cases() -> list:
    """Indexing, sorting and scans (docs/semantics.md "Indexing, sorting and scans"): exact on both
    backends, NaN, ties and signed zeros included; index operands drawn inside their axis."""
    cases = []
    for op in ("argmax", "argmin"):
        for d in ("fp32", "fp16"):
            cases.append(Case(f"{op}/{d}", f"pypto.{op}(x, -1, True)", (("x", FULL, d),), ((R, 1), "int32")))
            cases.append(Case(f"{op}_col/{d}", f"pypto.{op}(x, 0, True)", (("x", FULL, d),), ((1, C), "int32")))
    for d in ("fp32", "fp16"):
        cases.append(Case(f"argsort/{d}", "pypto.argsort(x, -1, False)", (("x", FULL, d),), (FULL, "int32")))
        cases.append(Case(f"argsort_desc/{d}", "pypto.argsort(x, -1, True)", (("x", FULL, d),), (FULL, "int32")))
    for name, largest in (("topk", True), ("topk_small", False)):
        cases.append(Case(f"{name}/fp32", f"pypto.topk(x, 9, -1, {largest})[0]", (("x", FULL, "fp32"),), ((R, 9), "fp32")))
        cases.append(Case(f"{name}_indices/fp32", f"pypto.topk(x, 9, -1, {largest})[1]", (("x", FULL, "fp32"),),
                          ((R, 9), "int32")))
    for d in ("fp32", "fp16", "int32"):
        for idt in ("int32", "int64"):
            cases.append(Case(f"gather_col/{d}/{idt}", "pypto.gather(x, 0, i)", (("x", FULL, d), ("i", (4, 40), idt)),
                              ((4, 40), d), indices=(("i", R),)))
        cases.append(Case(f"gather_row/{d}", "pypto.gather(x, 1, i)", (("x", FULL, d), ("i", (R, 40), "int32")),
                          ((R, 40), d), indices=(("i", C),)))
    for d in ("fp32", "fp16", "int32"):
        src = (("s", (2, C), d),)
        cases.append(Case(f"scatter/{d}", "pypto.scatter(x, 0, i, s)", (("x", FULL, d), ("i", (2, C), "int64")) + src,
                          (FULL, d), indices=(("i", R),)))
        cases.append(Case(f"scatter_add/{d}", "pypto.scatter(x, 0, i, s, reduce='add')",
                          (("x", FULL, d), ("i", (2, C), "int32")) + src, (FULL, d), indices=(("i", R),)))
        cases.append(Case(f"scatter_row_mul/{d}", "pypto.scatter(x, 1, i, 2, reduce='multiply')",
                          (("x", FULL, d), ("i", (2, 30), "int32")), (FULL, d), indices=(("i", C),)))
    cases.append(Case("scatter_s/fp16", "pypto.scatter(x, 1, i, 0.1)", (("x", FULL, "fp16"), ("i", (R, 30), "int64")),
                      (FULL, "fp16"), indices=(("i", C),)))
    for d in ("fp32", "fp16", "int32"):  # rows of x at index[i][j] take src row i * s + j
        cases.append(Case(f"scatter_update/{d}", "pypto.scatter_update(x, -2, i, s)",
                          (("x", FULL, d), ("i", (1, 2), "int64"), ("s", (2, C), d)), (FULL, d), indices=(("i", R),)))
    for d in ("fp32", "fp16", "int32"):  # row j: x's row table[0, i[0, j]] (blocks of one row)
        cases.append(Case(f"gather_in_ub/{d}", "pypto.experimental.gather_in_ub(x, i, b, 1, -2)",
                          (("x", FULL, d), ("i", (1, 5), "int32"), ("b", (1, 4), "int32")), ((5, C), d),
                          indices=(("i", 4), ("b", R))))
    for d in ("int32", "int64"):
        cases.append(Case(f"one_hot/{d}", "pypto.one_hot(x, 11)", (("x", (R, 20), d),), ((R, 20, 11), "int64"),
                          indices=(("x", 11),)))
    for op in ("cumsum", "cumprod"):
        for d in ("fp32", "fp16"):
            cases.append(Case(f"{op}/{d}", f"pypto.{op}(x, 1)", (("x", FULL, d),), (FULL, d),
                              magnitudes=(1.0,) if op == "cumprod" else ()))
            cases.append(Case(f"{op}_col/{d}", f"pypto.{op}(x, 0)", (("x", FULL, d),), (FULL, d),
                              magnitudes=(1.0,) if op == "cumprod" else ()))
    for dim in (0, 1):
        cases.append(Case(f"cumsum{'_col' if dim == 0 else ''}/int32", f"pypto.cumsum(x, {dim})", (("x", FULL, "int32"),),
                          (FULL, "int64")))
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
    for op in ("erf", "erfc", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "tan", "tanh", "asin", "acos",
               "cbrt"):
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


def _int_specials(dtype: str) -> list:
    """INT_SPECIALS that ``dtype`` holds, with its own extremes and the shift widths around 16."""
    info = torch.iinfo(TORCH_DT[dtype])
    more = [info.min, info.max, info.min + 1, info.max - 1, 15, 16, 17, -16, 255, 256, 2 ** 15 - 1, -(2 ** 15)]
    return sorted({v for v in INT_SPECIALS + more if info.min <= v <= info.max})


@st.composite
def tensor_values(draw, shape: tuple, dtype: str, magnitudes: tuple = (), base=None, limit=math.inf,
                  planted: tuple = ()) -> torch.Tensor:
    """A background of one magnitude (seeded torch values; or a copy of ``base``) with special
    values planted in it."""
    rows, cols = shape if len(shape) == 2 else (1, shape[0])
    if base is not None:
        t = base.clone()
    elif dtype in INTS:
        g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
        bound = draw(st.sampled_from(MAGNITUDES["int32"]))
        info = torch.iinfo(TORCH_DT[dtype])
        t = torch.randint(max(info.min, -bound), min(info.max, bound) + 1, shape, generator=g,
                          dtype=torch.int64).to(TORCH_DT[dtype])
    elif dtype == "bool":
        g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
        t = torch.rand(shape, generator=g) < draw(st.sampled_from([0.1, 0.5, 0.9]))
    else:
        g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
        scale = draw(st.sampled_from(list(magnitudes or MAGNITUDES[dtype])))
        t = (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(TORCH_DT[dtype])
    specials = st.sampled_from(_int_specials(dtype) if dtype in INTS else [False, True] if dtype == "bool" else
                               [v for v in (planted or _specials(dtype)) if not abs(v) > limit])
    column = st.one_of(st.sampled_from([c for c in COLUMNS if c < cols]), st.integers(0, cols - 1))
    for row, col, value in draw(st.lists(st.tuples(st.integers(0, rows - 1), column, specials), max_size=10)):
        t[(row, col) if len(shape) == 2 else col] = value
    return t


@st.composite
def index_values(draw, shape: tuple, dtype: str, bound: int) -> torch.Tensor:
    """Indices in [0, bound), repeats included, with 0 and bound - 1 planted."""
    g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
    t = torch.randint(0, draw(st.sampled_from([1, 2, bound])), shape, generator=g).to(TORCH_DT[dtype])
    flat = t.view(-1)
    for at in draw(st.lists(st.integers(0, flat.numel() - 1), max_size=6)):
        flat[at] = draw(st.sampled_from([0, bound - 1]))
    return t


@st.composite
def examples(draw, cases: list):
    """A case and its input values; a second operand is sometimes the first one with a few
    elements changed (equal operands: comparisons, max/min of equal values, x - x)."""
    case = CASES[draw(st.sampled_from(cases))]
    values = {}
    bounds = dict(case.indices)
    for name, shape, dtype in case.params:
        if name in bounds:
            values[name] = draw(index_values(shape, dtype, bounds[name]))
            continue
        same = name == "y" and case.params[0][1:] == (shape, dtype) and draw(st.booleans())
        values[name] = draw(tensor_values(shape, dtype, case.magnitudes, values["x"] if same else None, case.limit,
                                          case.specials))
        if name == case.nonzero:
            values[name][values[name] == 0] = 1
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
    elif math.isfinite(case.quotient) and values is not None:  # exact inside its range, unspecified past it
        q = (values["x"].double() / values["y"].double()).abs()
        outside = q.isfinite() & (q >= case.quotient)
        same = (host == interp) & (torch.signbit(host) == torch.signbit(interp))
        bad = ~(same | (host.isnan() & interp.isnan()) | outside)
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


def _special_rows(dtype: str) -> torch.Tensor:
    """Rows with NaN (twice), +-inf, -0 before +0, and ties: what the index rules decide."""
    g = torch.Generator().manual_seed(9)
    x = (torch.randn(R, C, generator=g) * 4).round()  # small integers: many ties
    x[0, 3], x[0, 40], x[0, 60] = NAN, INF, NAN
    x[1, 2], x[1, 9], x[1, 30] = -0.0, 0.0, -INF
    x[2, :] = 0.0
    x[2, 5] = -0.0
    return x.to(TORCH_DT[dtype])


@pytest.mark.parametrize("key", ["argmax/fp32", "argmin/fp32", "argmax/fp16", "argmin/fp16", "argmax_col/fp32",
                                 "argmin_col/fp16"])
def test_argmax_and_argmin_give_the_first_extreme_a_nan_counting_as_one(key):
    """The host's ReduceMax orders -0 below +0 and the interpreter's rule (torch's) counts them
    equal: the kernel adds +0 first, so both give the first index of the extreme."""
    x = _special_rows(CASES[key].params[0][2])
    got = _host_and_interp(key, {"x": x})
    dim = 0 if "_col" in key else 1
    want = getattr(torch, key.split("_")[0].split("/")[0])(x, dim=dim, keepdim=True).int()
    assert torch.equal(got, want), (got.flatten()[:8], want.flatten()[:8])


@pytest.mark.parametrize("key", ["argsort/fp32", "argsort_desc/fp32", "argsort/fp16", "argsort_desc/fp16",
                                 "topk_indices/fp32", "topk_small_indices/fp32", "topk/fp32", "topk_small/fp32"])
def test_sorts_are_stable_with_nan_above_inf_and_zeros_equal(key):
    """argsort and topk: ties (and -0, +0) in input order, NaN above +inf, on both backends."""
    x = _special_rows(CASES[key].params[0][2])
    got = _host_and_interp(key, {"x": x})
    descending = "desc" in key or ("topk" in key and "small" not in key)
    values, indices = torch.sort(x, dim=1, descending=descending, stable=True)
    k = got.shape[1]
    want = values[:, :k] if key.startswith(("topk/", "topk_small/")) else indices[:, :k].int()
    assert torch.equal(got, want) or _bits_equal(got, want.tolist()), (got[0, :8], want[0, :8])


@pytest.mark.parametrize("key", ["cumsum/fp32", "cumsum_col/fp32", "cumsum/fp16", "cumprod/fp32", "cumprod_col/fp32"])
def test_float_scans_accumulate_in_fp32_one_element_after_the_other(key):
    """1 + 1e-8 + 1e-8 + ... stays 1 on both backends (fp32 partial sums in order, as Add along the
    axis computes them); torch's CPU scan accumulates in double."""
    case = CASES[key]
    x = torch.full(FULL, 1e-8 if "sum" in key else 1.0 + 2 ** -23)
    x[0, :] = x[:, 0] = 1.0
    x = x.to(TORCH_DT[case.params[0][2]])
    got = _host_and_interp(key, {"x": x})
    dim = 0 if "_col" in key else 1
    acc = x.float().select(dim, 0).clone()
    for i in range(1, x.shape[dim]):
        acc = acc + x.float().select(dim, i) if "sum" in key else acc * x.float().select(dim, i)
    assert torch.equal(got.select(dim, x.shape[dim] - 1), acc.to(x.dtype))


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


# ---- the integer, bitwise and logical family ----------------------------------------------------

INT32_EXTREMES = [0, 1, -1, 2, -2, 3, 7, -5, 46341, -46341, 65535, 2 ** 24, 2 ** 24 + 1, -(2 ** 24 + 1), 123456789,
                  -987654321, 2 ** 30, -(2 ** 30), 2 ** 31 - 128, 2 ** 31 - 65, 2 ** 31 - 64, -(2 ** 31) + 1,
                  2 ** 31 - 1, -(2 ** 31)]


def _wrap32(v: int) -> int:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def _batches(pairs: list, dtype: str):
    """(x, y) tiles of R x C holding ``pairs`` (padded with (1, 1)), one per launch."""
    for start in range(0, len(pairs), R * C):
        chunk = pairs[start:start + R * C]
        chunk = chunk + [(1, 1)] * (R * C - len(chunk))
        xs, ys = zip(*chunk)
        yield (torch.tensor(xs, dtype=torch.int64).to(TORCH_DT[dtype]).reshape(R, C),
               torch.tensor(ys, dtype=torch.int64).to(TORCH_DT[dtype]).reshape(R, C))


@pytest.mark.parametrize("op", ["remainder", "floor_div", "ceil_div"])
def test_int32_division_is_exact_for_every_pair_of_extremes(op):
    """A2 has no integer division: pypto computes it in float and promises int32 only within
    +-2^24 (its remainder page). The host's two quotient estimates and one correction are exact for
    every int32, as torch: each pair of extremes (INT_MIN // -1 wraps to INT_MIN)."""
    pairs = [(a, b) for a in INT32_EXTREMES for b in INT32_EXTREMES if b != 0]
    exact = {"remainder": lambda a, b: a - b * (a // b), "floor_div": lambda a, b: a // b,
             "ceil_div": lambda a, b: -((-a) // b)}[op]
    for x, y in _batches(pairs, "int32"):
        got = _host_and_interp(f"{op}/int32", {"x": x, "y": y})
        want = [_wrap32(exact(a, b)) for a, b in zip(x.flatten().tolist(), y.flatten().tolist())]
        assert got.flatten().tolist() == want


@pytest.mark.parametrize("key", ["remainder/int16", "remainder/int32", "floor_div/int32", "ceil_div/int32"])
def test_integer_division_by_zero_faults_on_both_backends(key):
    """An integer division by 0 is an error in torch and chip-defined on the NPU (pypto's op pages);
    both backends stop with a located error: the interpreter's InterpError, the kernel's
    ascendc_assert over the divisor's valid elements (a HardwareFault on the host)."""
    from pypto_ast.emit.host_backend import HostRunError
    from pypto_ast.ir.interp import InterpError

    case = CASES[key]
    program, launch, names = _program(case)
    values = _filled(case, 5)
    values["y"][1, C - 1] = 0  # the last column of the second row tile's row: its tail
    args = dict(values, out=torch.zeros(FULL, dtype=TORCH_DT[case.out[1]]))
    with pytest.raises(HostRunError, match="integer division by zero") as host:
        launch.launch([args[n] for n in names])
    with pytest.raises(InterpError, match="integer division by zero") as interp:
        run_program(program, dict(args))
    assert host.value.span is not None and interp.value.span is not None


def test_gcd_is_torchs_at_int_min_and_on_fibonacci_numbers():
    """gcd follows torch's Euclid loop bit for bit: |INT_MIN| wraps to INT_MIN, so gcd(INT_MIN, 6)
    is -2 and gcd(INT_MIN, 0) is INT_MIN; consecutive Fibonacci numbers take the most steps (45 for
    values below 2^31, within the kernel's 48 rounds)."""
    fib = [1, 2]
    while fib[-1] + fib[-2] < 2 ** 31:
        fib.append(fib[-1] + fib[-2])
    pairs = [(a, b) for a in INT32_EXTREMES for b in INT32_EXTREMES] + list(zip(fib[1:], fib)) + list(zip(fib, fib[1:]))
    for x, y in _batches(pairs, "int32"):
        got = _host_and_interp("gcd/int32", {"x": x, "y": y})
        assert torch.equal(got, torch.gcd(x, y))
    x, y = next(_batches([(-(2 ** 31), 6), (-(2 ** 31), 0), (0, 0), (fib[-1], fib[-2])], "int32"))
    assert _host_and_interp("gcd/int32", {"x": x, "y": y}).flatten()[:4].tolist() == [-2, -(2 ** 31), 0, 1]


@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_by_amounts_outside_the_width_are_torchs(op):
    """A2 shifts by a scalar in [0, 16] only; the host composes a shift by a tensor from the amount's
    bits. Amounts outside [0, 15] give torch's answer: 0 to the left, the sign to the right."""
    amounts = [-32768, -17, -16, -1, 0, 1, 7, 14, 15, 16, 17, 32767]
    pairs = [(a, b) for a in (-32768, -300, -1, 0, 1, 5, 300, 32767) for b in amounts]
    for x, y in _batches(pairs, "int16"):
        got = _host_and_interp(f"{op}/int16", {"x": x, "y": y})
        assert torch.equal(got, getattr(torch, op)(x, y))
    for k in (3, 20):
        x = next(_batches(pairs, "int16"))[0]
        assert torch.equal(_host_and_interp(f"{op}_{k}/int16", {"x": x}), getattr(torch, op)(x, k))


@pytest.mark.parametrize("key", ["fmod/fp32", "remainder/fp32", "fmod/fp16", "remainder/fp16"])
def test_fmod_and_remainder_are_exact_while_the_quotient_is_below_2_to_the_24(key):
    """A2's own Fmod is x - trunc(x / y) * y, off by the rounding of the product; the host takes
    the product exactly (Dekker), so fmod and remainder are torch's bit for bit while |x / y| < 2^24,
    signed zeros, infinities, NaN and denormals included."""
    dt = key[-4:]
    big = 3.4e38 if dt == "fp32" else 65504.0
    tiny = 1e-45 if dt == "fp32" else 2.0 ** -24
    xs = [5.0, -5.0, 5.0, INF, 1.0, -0.0, -1.0, 0.0, -3.0, NAN, -INF, -4.0, 4.0, 7.5, -7.5, big, -big, tiny, 2.5, 1e4]
    ys = [3.0, 3.0, 0.0, 2.0, INF, 2.0, INF, -2.0, 3.0, 1.0, 2.0, 2.0, -2.0, -INF, 0.5, big, 3e34 if dt == "fp32" else 8.0,
          tiny, -0.75, 3.3]
    values = _filled(CASES[key])
    values["x"][0, :len(xs)] = torch.tensor(xs).to(TORCH_DT[dt])
    values["y"][0, :len(ys)] = torch.tensor(ys).to(TORCH_DT[dt])
    g = torch.Generator().manual_seed(17)
    values["x"][1:] = (torch.randn(R - 1, C, generator=g) * 1000).to(TORCH_DT[dt])
    values["y"][1:] = (torch.randn(R - 1, C, generator=g) * 3).to(TORCH_DT[dt])
    got = _host_and_interp(key, values)
    want = getattr(torch, key.split("/")[0])(values["x"].float(), values["y"].float()).to(TORCH_DT[dt])
    assert _bits_equal(got, want.tolist()), (got[0, :len(xs)].tolist(), want[0, :len(xs)].tolist())


def test_copysign_and_signbit_read_the_sign_bit():
    """copysign takes y's sign bit (-0.0 and a negative NaN count) and signbit reads it (signbit(-0.0)
    and of -NaN are True), as torch: the host masks the bits (And / Or, ShiftRight by 31)."""
    neg_nan = -torch.tensor(NAN)
    y = torch.tensor([-0.0, 0.0, NAN, 1.0, -INF, -1e-45]).tolist() + [neg_nan.item()]
    values = _filled(CASES["copysign/fp32"], 2.5)
    values["y"][0, :len(y)] = torch.tensor(y)
    values["y"][0, len(y) - 1] = neg_nan
    got = _host_and_interp("copysign/fp32", values)
    assert torch.equal(torch.signbit(got[0, :len(y)]), torch.signbit(values["y"][0, :len(y)]))
    values = _filled(CASES["signbit/fp32"], 1.0)
    values["x"][0, :len(y)] = torch.tensor(y)
    values["x"][0, len(y) - 1] = neg_nan
    got = _host_and_interp("signbit/fp32", values)
    assert got[0, :len(y)].tolist() == [True, False, False, False, True, True, True]


@pytest.mark.parametrize("dt", ["fp32", "fp16"])
def test_isfinite_is_false_on_inf_and_nan_only(dt):
    """isfinite is False on +-inf and NaN (either sign) and True on everything else, the largest finite
    values and denormals included; the host decides it by x - x == 0."""
    big = 65504.0 if dt == "fp16" else 3.4028234663852886e38
    tiny = 6e-8 if dt == "fp16" else 1e-45
    x = [INF, -INF, NAN, -NAN, big, -big, tiny, -0.0, 0.0, 1.0]
    values = _filled(CASES[f"isfinite/{dt}"], 1.0)
    values["x"][1, :len(x)] = torch.tensor(x).to(TORCH_DT[dt])
    values["x"][2, C - len(x):] = torch.tensor(x).to(TORCH_DT[dt])
    got = _host_and_interp(f"isfinite/{dt}", values)
    want = [False, False, False, False] + [True] * 6
    assert got[1, :len(x)].tolist() == want and got[2, C - len(x):].tolist() == want
    assert bool(got[0].all())


def test_a_bool_tensor_read_from_gm_drives_where_and_the_logical_ops():
    """A DT_BOOL parameter stopped the emitter ('reading @c of dtype bool'): its bytes are now read
    and turned into Select's bit mask (Cast to half, CompareScalar != 0)."""
    g = torch.Generator().manual_seed(23)
    c, d = torch.rand(R, C, generator=g) < 0.5, torch.rand(R, C, generator=g) < 0.5
    x, y = torch.randn(R, C, generator=g), torch.randn(R, C, generator=g)
    assert torch.equal(_host_and_interp("where_bool/fp32", {"c": c, "x": x, "y": y}), torch.where(c, x, y))
    assert torch.equal(_host_and_interp("logical_and/bool", {"x": c, "y": d}), c & d)
    assert torch.equal(_host_and_interp("logical_not/bool", {"x": c}), ~c)


REMAINDER_TILES = '''
import pypto


@pypto.frontend.jit
def tiles(a: pypto.Tensor([72, 71], pypto.DT_INT16), b: pypto.Tensor([72, 71], pypto.DT_INT16),
          out: pypto.Tensor([72, 71], pypto.DT_INT16)):
    pypto.set_vec_tile_shapes(16, 16)
    for bidx in pypto.loop(3, name="b0", idx_name="bidx"):
        for sidx in pypto.loop(3, name="s0", idx_name="sidx"):
            valid = [pypto.min(32, 72 - bidx * 32), pypto.min(32, 71 - sidx * 32)]
            x = pypto.view(a, [32, 32], [bidx * 32, sidx * 32], valid_shape=valid)
            y = pypto.view(b, [32, 32], [bidx * 32, sidx * 32], valid_shape=valid)
            z = pypto.bitwise_xor(pypto.remainder(x, y), pypto.bitwise_left_shift(x, 3))
            pypto.assemble(z, [bidx * 32, sidx * 32], out)
'''


def test_partial_tiles_of_an_int16_kernel_match_torch(tmp_path):
    """The official int16 tests' shape: [32, 32] views of a [72, 71] tensor, the last ones partial
    (valid 8 rows, 7 columns): remainder's zero check reads only the valid elements of each tile,
    whatever lies past them; results are torch's."""
    path = tmp_path / "tiles.py"
    path.write_text(REMAINDER_TILES)
    program = pipeline.lower(live.find_kernel(live.load_module(str(path))))
    names = [p.name for p in program.params]
    launch = HostLaunch.build(program, ascendc.emit_program(program), names)
    g = torch.Generator().manual_seed(29)
    a = torch.randint(-2 ** 15, 2 ** 15, (72, 71), generator=g, dtype=torch.int32).to(torch.int16)
    b = torch.randint(1, 300, (72, 71), generator=g, dtype=torch.int32).to(torch.int16)
    b[::3] = -b[::3]
    outs = []
    for backend in ("host", "interp"):
        args = {"a": a, "b": b, "out": torch.zeros(72, 71, dtype=torch.int16)}
        launch.launch([args[n] for n in names]) if backend == "host" else run_program(program, args)
        outs.append(args["out"])
    want = torch.bitwise_xor(torch.remainder(a, b), torch.bitwise_left_shift(a, 3))
    assert torch.equal(outs[0], want) and torch.equal(outs[1], want)


@pytest.mark.parametrize("expr,dtype,what", [("pypto.gcd(x, y)", "int16", "op 'gcd' on dtype int16"),
                                             ("pypto.floor_div(x, y)", "fp32", "op 'floor_div' on dtype fp32")])
def test_an_integer_op_the_emitter_lacks_is_a_located_gap(tmp_path, expr, dtype, what):
    """A dtype the op page allows but the emitter does not compose yet is PTO109 naming op and dtype,
    at the op's line (the front end's PTO106 is for what pypto itself refuses)."""
    path = tmp_path / "gap.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    f"def gap(x: pypto.Tensor([4, 64], {DT[dtype]}), y: pypto.Tensor([4, 64], {DT[dtype]}),\n"
                    f"        out: pypto.Tensor([4, 64], {DT[dtype]})):\n"
                    "    pypto.set_vec_tile_shapes(4, 64)\n"
                    f"    out[:] = {expr}\n")
    program = pipeline.lower(live.find_kernel(live.load_module(str(path))))
    with pytest.raises(EmitError, match=what) as caught:
        ascendc.emit_program(program)
    assert UNSUPPORTED in caught.value.message and caught.value.span is not None and caught.value.span.line == 8


BOOL_THROUGH_GM = '''
import pypto


@pypto.frontend.jit
def masks(x: pypto.Tensor([4, 64], pypto.DT_FP32), y: pypto.Tensor([4, 64], pypto.DT_INT16),
          out: pypto.Tensor([4, 64], pypto.DT_BOOL)):
    pypto.set_vec_tile_shapes(4, 64)
    scratch = pypto.tensor([4, 64], pypto.DT_BOOL, "scratch")
    scratch[:] = pypto.logical_not(x)
    out[:] = pypto.logical_and(pypto.logical_not(scratch), y)
'''


def test_a_bool_value_goes_through_gm_as_bytes_and_comes_back_as_a_mask(tmp_path):
    """A bool written to a pypto.tensor local and read back by the next kernel: stored as one byte
    each (Select, Cast half -> uint8), read as bytes and turned into a mask again."""
    path = tmp_path / "masks.py"
    path.write_text(BOOL_THROUGH_GM)
    program = pipeline.lower(live.find_kernel(live.load_module(str(path))))
    files = ascendc.emit_program(program)
    assert sum(name.endswith(".cpp") and name != "control.cpp" for name in files) == 2, sorted(files)
    names = [p.name for p in program.params]
    launch = HostLaunch.build(program, files, names)
    x = torch.tensor([0.0, -0.0, 1.0, NAN, -INF, 2.5, 0.0, 3.0] * 32).reshape(4, 64)
    y = torch.tensor([0, 1, -2, 0, 3, 0, 7, 0] * 32, dtype=torch.int16).reshape(4, 64)
    for backend in ("host", "interp"):
        args = {"x": x, "y": y, "out": torch.zeros(4, 64, dtype=torch.bool)}
        launch.launch([args[n] for n in names]) if backend == "host" else run_program(program, args)
        assert torch.equal(args["out"], (x != 0) & (y != 0)), backend


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32"])
def test_exp2_of_an_integer_is_fp32_from_every_value_of_its_range(dt):
    """exp2 of an integer input is fp32 (the op page): the extremes, zero and a sweep of the range,
    widened to fp32 first (8-bit inputs through half, int32 rounded to nearest as torch converts)."""
    case = CASES[f"exp2/{dt}"]
    info = torch.iinfo(TORCH_DT[dt])
    shape = case.params[0][1]
    n = shape[0] * shape[1]
    sweep = torch.linspace(info.min, info.max, n, dtype=torch.float64).round()
    sweep[:4] = torch.tensor([info.min, info.max, 0, 1], dtype=torch.float64)
    x = sweep.clamp(info.min, info.max).to(TORCH_DT[dt]).reshape(shape)
    got = _host_and_interp(f"exp2/{dt}", {"x": x})
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, torch.exp2(x.to(torch.float32)), rtol=RTOL_POW, atol=0.0)


def _half_nearest_even(v: int) -> float:
    """int ``v`` rounded to fp16 to nearest-even, clamped to +-65504 (the default satmode clamps,
    docs/semantics.md "Casts")."""
    if v == 0:
        return 0.0
    mag = abs(v)
    e = max(mag.bit_length() - 11, 0)  # fp16 keeps 11 significant bits
    q, rest = divmod(mag, 1 << e)
    half = 1 << e >> 1 if e else 1
    if e and (rest > half or (rest == half and q & 1)):
        q += 1
    return math.copysign(min(q << e, 65504), v)


@pytest.mark.parametrize("mode", ["CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC"])
def test_int32_to_fp16_rounds_to_nearest_even_whatever_the_mode(mode):
    """An int -> float cast rounds to nearest-even (the A2 int32 -> half Cast ignores the mode);
    the host casts through fp32 (exact below 2^24), so each value rounds once, ties to even, and
    past 65504 clamps."""
    key = f"cast_f16_{mode[5:].lower()}/int32"
    ints = [0, 1, -1, 2047, 2049, 2051, -2049, -2051, 3001, 4097, 4099, -4098, 4102, 65503, 65504, 65505, 65519,
            65520, 70000, -70000, 2 ** 24 + 1, 2 ** 31 - 1, -(2 ** 31), 123457, -33333]
    row = (ints * (C // len(ints) + 1))[:C]
    x = torch.tensor([row] * R, dtype=torch.int32)
    got = _host_and_interp(key, {"x": x})
    assert _bits_equal(got[0], [_half_nearest_even(v) for v in row])
