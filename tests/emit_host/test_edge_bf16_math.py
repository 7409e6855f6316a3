"""bf16 and the math functions on both backends, against torch: the named rules of docs/semantics.md
("bf16", "Math functions", softmax, the casts to bf16) whose kernels are cases of
test_edge_semantics.py (its property test draws edge values for every one of them), and the host
runtime's checks of the high-level math APIs."""

from __future__ import annotations

import math

import pytest
import torch
from test_edge_semantics import BF16_MAX, CASES, C, INF, NAN, R, TORCH_DT, _bits_equal, _filled, _host_and_interp
from test_runtime_header import FAULT_MAIN, build_and_run

from pypto_ast import live, pipeline
from pypto_ast.emit import ascendc
from pypto_ast.emit.errors import UNSUPPORTED, EmitError

from support import needs_cxx

pytestmark = needs_cxx


def _random(dtype: str, scale: float = 10.0, seed: int = 0, lo=None, hi=None) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if lo is not None:
        x = torch.rand(R, C, generator=g, dtype=torch.float64) * (hi - lo) + lo
    else:
        x = torch.randn(R, C, generator=g, dtype=torch.float64) * scale
    return x.to(TORCH_DT[dtype])


def _ulps(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """|got - want| in units of the fp32 ulp at ``want`` (fp64), for finite nonzero ``want``."""
    w = want.float().abs()
    ulp = (torch.nextafter(w, torch.tensor(math.inf)) - w).double()
    return ((got.double() - want) / ulp).abs()


# ---- bf16 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_bf16_arithmetic_is_torchs_bf16_arithmetic(op):
    """mul on bf16 stopped at the emitter (A2 has no bf16 arithmetic): each op now casts its operands to
    fp32, computes and rounds once (CAST_RINT), the correctly rounded bf16 result that torch's bf16 CPU
    kernels give, bit for bit, on both backends."""
    x, y = _random("bf16", 100.0, 1), _random("bf16", 3.0, 2)
    x[0, :7] = torch.tensor([INF, -INF, NAN, 0.0, BF16_MAX, 1.0 + 2.0 ** -7, 3.0])
    y[0, :7] = torch.tensor([1.0, INF, 2.0, 0.0, 4.0, 1.0 + 2.0 ** -7, 2.0 ** -126])  # no -0 beside +0: see maximum
    got = _host_and_interp(f"{op}/bf16", {"x": x, "y": y})
    assert _bits_equal(got, getattr(torch, op)(x, y).tolist())


def test_bf16_scalars_are_rounded_to_bf16_first():
    """pypto's Element rule: `x * 0.1` on bf16 multiplies by bf16(0.1) = 0.10009765625 (torch would keep
    0.1 in fp32)."""
    x = _random("bf16", 50.0, 3)
    got = _host_and_interp("mul_tenth/bf16", {"x": x})
    tenth = torch.tensor(0.1, dtype=torch.bfloat16).float()
    assert _bits_equal(got, (x.float() * tenth).bfloat16().tolist())
    assert not _bits_equal(got, (x * 0.1).tolist())


def test_a_bf16_sum_rounds_once():
    """sum on bf16 was refused by the interpreter and the emitter: it accumulates in fp32 and rounds
    once, so 256 + 1 + 1 + 1 + 1 is 260 (a bf16 accumulator stays at 256: 257 rounds back to it)."""
    x = _random("bf16", 20.0, 4).round()  # integers: their fp32 sums are exact
    x[0] = 0.0
    x[0, :5] = torch.tensor([256.0, 1.0, 1.0, 1.0, 1.0])
    got = _host_and_interp("sum_row/bf16", {"x": x})
    assert got[0, 0] == 260.0
    assert _bits_equal(got, x.float().sum(-1, keepdim=True).bfloat16().tolist())


@pytest.mark.parametrize("key", ["sigmoid/bf16", "sigmoid/fp16", "exp/bf16", "log1p/bf16", "sqrt/bf16"])
def test_16_bit_transcendental_ops_round_once_from_fp32(key):
    """sigmoid on bf16 was "dtype bf16 not supported" in the interpreter (pypto's own sigmoid casts to
    fp32 and back): these ops are torch's fp32 function rounded once, within one rounding of it."""
    name, dtype = key.split("/")
    x = _random(dtype, 4.0, 5).abs() if name in ("log1p", "sqrt") else _random(dtype, 4.0, 5)
    got = _host_and_interp(key, {"x": x})
    want = getattr(torch, name)(x.float()).to(x.dtype)
    torch.testing.assert_close(got.float(), want.float(), rtol=CASES[key].rtol, atol=0)


def test_fp32_to_bf16_casts_round_to_nearest_even_and_saturate():
    """A cast to bf16 stopped at the emitter. CAST_NONE is nearest-even (A2's Cast to bf16 takes
    CAST_RINT), a finite overflow saturates to the bf16 maximum (pypto's default; the A2 Cast gives
    inf, so the kernel clamps first), +-inf and NaN stay, CAST_TRUNC rounds toward zero."""
    x = torch.tensor([1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, -(1.0 + 2.0 ** -8 + 2.0 ** -20), 3.39e38, 3.4e38,
                      -3.4028234663852886e38, INF, -INF, NAN, -0.0, 1e-40, 2.0 ** -133])
    values = _filled(CASES["cast_bf16/fp32"])
    values["x"][:, :len(x)] = x
    values["x"][:, C - len(x):] = x
    want = [1.0, 1.0 + 2.0 ** -6, -(1.0 + 2.0 ** -7), BF16_MAX, BF16_MAX, -BF16_MAX, INF, -INF, NAN, -0.0,
            x[10].bfloat16().item(), 2.0 ** -133]
    got = _host_and_interp("cast_bf16/fp32", values)
    assert _bits_equal(got[:, :len(x)], want) and _bits_equal(got[:, C - len(x):], want), got[0, :len(x)].tolist()
    values = _filled(CASES["cast_bf16_trunc/fp32"])
    values["x"][:, :4] = torch.tensor([1.0 + 3 * 2.0 ** -8, -(1.0 + 3 * 2.0 ** -8), 3.4e38, -1e-45])
    got = _host_and_interp("cast_bf16_trunc/fp32", values)
    assert _bits_equal(got[:, :4], [1.0 + 2.0 ** -7, -(1.0 + 2.0 ** -7), BF16_MAX, -0.0])


def test_bf16_to_int32_truncates_and_clamps():
    values = _filled(CASES["cast_i32_none/bf16"])
    values["x"][:, :6] = torch.tensor([-2.5, 2.5, 1e10, -1e10, NAN, -INF])
    got = _host_and_interp("cast_i32_none/bf16", values)
    assert got[0, :6].tolist() == [-2, 2, 2 ** 31 - 1, -(2 ** 31), 0, -(2 ** 31)]


# ---- softmax -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_softmax_is_within_its_bound_of_torch_in_double(dtype):
    """softmax stopped at the emitter, and fp16/bf16 in the interpreter: exp(x - max) / sum in fp32 (a
    true division), rounded once; relative error at most 2^-23 (|x - max| + 8) in fp32, plus the final
    rounding for fp16/bf16; a row holding NaN or +inf, or only -inf, is NaN."""
    x = _random(dtype, 8.0, 6)
    special = torch.zeros(R, C, dtype=torch.bool)
    x[1, 5], x[2] = NAN, -INF  # row 1: a NaN; row 2: only -inf
    x[0, 7] = INF if dtype != "fp32" else x[0, 7]
    special[1:] = True
    special[0] = dtype != "fp32"
    got = _host_and_interp(f"softmax/{dtype}", {"x": x})
    assert bool(got[special].isnan().all())
    if dtype == "fp32":
        want = torch.softmax(x.double(), -1)
        bound = 2.0 ** -23 * ((x.double() - x.double().amax(-1, keepdim=True)).abs() + 8)
        rel = ((got.double() - want) / want)[~special].abs()
        assert bool((rel <= bound[~special]).all()), float((rel / bound[~special]).max())
        assert float(got[0].double().sum()) == pytest.approx(1.0, abs=1e-6)
        assert got[0, int(x[0].argmax())] == got[0].max()


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_softmax_over_the_rows(dtype):
    """softmax(x, 0) stopped at the emitter: the kernel is pypto's composition itself (amax and sum over
    the rows, accumulated per tile on one core), within the same bound of torch in fp64."""
    x = _random(dtype, 8.0, 15)
    x[1, 4] = NAN
    got = _host_and_interp(f"softmax_col/{dtype}", {"x": x})
    assert bool(got[:, 4].isnan().all()) and not bool(got[:, :4].isnan().any())
    want = torch.softmax(x.double(), 0)
    ok = ~got.isnan()
    if dtype == "fp32":
        bound = 2.0 ** -23 * ((x.double() - x.double().amax(0, keepdim=True)).abs() + 8)
        assert bool((((got.double() - want) / want).abs() <= bound)[ok].all())
    else:
        torch.testing.assert_close(got[ok].double(), want[ok].bfloat16().double(), rtol=CASES["softmax/bf16"].rtol, atol=0)


def test_softmax_of_a_dominant_element_is_one_and_zeros():
    values = _filled(CASES["softmax/fp32"], -200.0)
    values["x"][:, 3] = 0.0
    got = _host_and_interp("softmax/fp32", values)
    assert _bits_equal(got[:, 3], [1.0]) and bool((got[:, :3] == 0).all())


# ---- math functions ------------------------------------------------------------------------------

# op -> (input range(s), ulps allowed on each backend against torch in fp64)
ACCURACY = {
    "erf": ([(-5.0, 5.0)], 1.0), "erfc": ([(-3.0, 9.0)], 1.0), "atan": ([(-50.0, 50.0)], 1.0),
    "sinh": ([(-89.0, 89.0)], 1.0), "cosh": ([(-89.0, 89.0)], 1.0), "asinh": ([(-1e6, 1e6)], 1.0),
    "acosh": ([(1.0, 1e6)], 1.0), "atanh": ([(-0.999, 0.999)], 1.0), "tan": ([(-1.5, 1.5)], 1.0),
    "tanh": ([(-20.0, 20.0)], 1.0), "asin": ([(-1.0, 1.0)], 1.0), "acos": ([(-1.0, 1.0)], 1.0), "cbrt": ([(-1e30, 1e30)], 2.0),
    "atan2": ([(-5.0, 5.0), (-5.0, 5.0)], 2.0), "hypot": ([(-1e25, 1e25), (-1e25, 1e25)], 2.0),
    "pow": ([(0.01, 20.0), (-8.0, 8.0)], 1.0),
}


@pytest.mark.parametrize("op", sorted(ACCURACY))
def test_math_functions_are_accurate_against_torch_in_double(op):
    """erf ... pow (tensor exponent) stopped at the emitter, and the interpreter had no erf ... atanh,
    atan2: both backends are within the stated ulps of the exact (fp64) function in fp32."""
    ranges, ulps = ACCURACY[op]
    names = ("x", "y")[:len(ranges)]
    values = {n: _random("fp32", seed=7 + k, lo=lo, hi=hi) for k, (n, (lo, hi)) in enumerate(zip(names, ranges))}
    got = _host_and_interp(f"{op}/fp32", values)
    args = [values[n].double() for n in names]
    want = _cbrt64(*args) if op == "cbrt" else getattr(torch, op)(*args)
    err = _ulps(got, want)
    assert float(err.max()) <= ulps, (float(err.max()), int(err.argmax()))


SPECIALS = {  # op -> (inputs, what torch gives in fp64): C99's special values
    "erf": [(-0.0,), (INF,), (-INF,), (NAN,), (1e-30,)],
    "erfc": [(-INF,), (INF,), (NAN,), (30.0,), (-0.0,)],
    "atan": [(INF,), (-INF,), (-0.0,), (NAN,)],
    "sinh": [(-0.0,), (INF,), (-INF,), (89.3,), (-89.3,), (90.0,)],
    "cosh": [(-0.0,), (-INF,), (89.3,), (NAN,)],
    "asinh": [(-0.0,), (-INF,), (INF,), (NAN,)],
    "acosh": [(1.0,), (0.5,), (INF,), (-INF,)],
    "atanh": [(1.0,), (-1.0,), (2.0,), (-0.0,), (NAN,)],
    "tan": [(-0.0,), (INF,), (-INF,), (NAN,), (1e-30,)],
    "tanh": [(-0.0,), (INF,), (-INF,), (NAN,), (20.0,), (1e-30,)],
    "asin": [(-0.0,), (1.0,), (-1.0,), (1.5,), (NAN,)],
    "acos": [(1.0,), (-1.0,), (0.0,), (-1.5,), (NAN,)],
    "cbrt": [(-0.0,), (0.0,), (-8.0,), (27.0,), (INF,), (-INF,), (NAN,), (1e-45,)],
    "hypot": [(INF, NAN), (NAN, -INF), (0.0, -0.0), (3.0, 4.0), (3e38, 3e38), (1e-45, 1e-45), (NAN, 1.0)],
    "atan2": [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, -1.0), (-0.0, -1.0), (1.0, 0.0),
              (1.0, -0.0), (-1.0, -0.0), (INF, INF), (-INF, INF), (INF, -INF), (-INF, -INF), (2.0, INF),
              (-2.0, INF), (2.0, -INF), (-2.0, -INF), (INF, 3.0), (-INF, -3.0), (NAN, 1.0), (1.0, NAN), (1.0, 1.0)],
    "pow": [(NAN, 0.0), (1.0, NAN), (-1.0, INF), (-2.0, 3.0), (-2.0, 0.5), (0.0, -1.0), (-0.0, -1.0), (-0.0, -2.0),
            (0.5, -INF), (2.0, -INF), (-INF, 3.0), (-INF, -3.0), (INF, -0.5), (-0.0, 3.0), (4.0, 0.5)],
}


def _cbrt64(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t == 0, t, torch.sign(t) * t.abs() ** (1 / 3))


@pytest.mark.parametrize("op", sorted(SPECIALS))
def test_math_special_values(op):
    """The special values of docs/semantics.md ("Math functions"), bit for bit on both backends, at
    columns the vectorised loops and their tail reach."""
    rows = SPECIALS[op]
    names = ("x", "y")[:len(rows[0])]
    values = _filled(CASES[f"{op}/fp32"], 0.5)
    for k, name in enumerate(names):
        column = torch.tensor([r[k] for r in rows])
        values[name][0, :len(rows)] = column
        values[name][2, C - len(rows):] = column
    got = _host_and_interp(f"{op}/fp32", values)
    args = [torch.tensor([r[k] for r in rows]).double() for k in range(len(names))]  # the fp32 inputs
    want = (_cbrt64(*args) if op == "cbrt" else getattr(torch, op)(*args)).float()
    assert _bits_equal(got[0, :len(rows)], want.tolist()), (got[0, :len(rows)].tolist(), want.tolist())
    assert _bits_equal(got[2, C - len(rows):], want.tolist())


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("op", ["erf", "atanh", "hypot", "atan2", "cbrt"])
def test_16_bit_math_rounds_once_from_fp32(op, dtype):
    """fp16/bf16 math ops compute in fp32 (the kernel casts both ways) and round once."""
    lo, hi = (-0.99, 0.99) if op == "atanh" else (-4.0, 4.0)
    names = ("x", "y") if op in ("hypot", "atan2") else ("x",)
    values = {n: _random(dtype, seed=11 + k, lo=lo, hi=hi) for k, n in enumerate(names)}
    got = _host_and_interp(f"{op}/{dtype}", values)
    args = [values[n].double() for n in names]
    want = (_cbrt64(*args) if op == "cbrt" else getattr(torch, op)(*args)).float().to(TORCH_DT[dtype])
    torch.testing.assert_close(got.float(), want.float(), rtol=CASES[f"{op}/{dtype}"].rtol, atol=0)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_prelu_is_torchs(dtype):
    """prelu stopped at the emitter and was unknown to the interpreter: x > 0 ? x : w * x with the 1-D
    weight along the columns, as torch computes it (prelu(+0, w < 0) is -0)."""
    x = _random(dtype, 3.0, 12)
    x[0, :5] = torch.tensor([0.0, -0.0, NAN, -INF, INF])
    w = _random(dtype, 1.0, 13)[0]
    w[:5] = torch.tensor([-0.5, 0.25, 2.0, 0.0, -1.0])
    got = _host_and_interp(f"prelu/{dtype}", {"x": x, "w": w})
    want = torch.nn.functional.prelu(x.float(), w.float()).to(x.dtype)
    assert _bits_equal(got, want.tolist())


# ---- what the kernels call, and what the emitter refuses ----------------------------------------------

def _emitted(tmp_path, body: str, params: str = "x: pypto.Tensor([4, 64], pypto.DT_FP32)",
             out: str = "pypto.DT_FP32") -> str:
    path = tmp_path / "k.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    f"def k({params}, out: pypto.Tensor([4, 64], {out})):\n"
                    "    pypto.set_vec_tile_shapes(4, 64)\n"
                    f"    out[:] = {body}\n")
    files = ascendc.emit_program(pipeline.lower(live.find_kernel(live.load_module(str(path)))))
    return "\n".join(text for name, text in files.items() if name.endswith(".cpp") and name != "control.cpp")


@pytest.mark.parametrize("op,api", [("erf", "Erf"), ("erfc", "Erfc"), ("atan", "Atan"), ("sinh", "Sinh"),
                                    ("cosh", "Cosh"), ("asinh", "Asinh"), ("acosh", "Acosh"), ("atanh", "Atanh"),
                                    ("tan", "Tan"), ("tanh", "Tanh"), ("asin", "Asin"), ("acos", "Acos")])
def test_math_ops_call_the_high_level_api(tmp_path, op, api):
    """Where A2 has a high-level math API the kernel calls it on fp32, its temporary the work buffer
    (at least the API's minimum size)."""
    source = _emitted(tmp_path, f"pypto.{op}(x)")
    assert f"AscendC::{api}(" in source and "work.Get<uint8_t>()" in source
    source = _emitted(tmp_path, f"pypto.{op}(x)", "x: pypto.Tensor([4, 64], pypto.DT_BF16)", "pypto.DT_BF16")
    assert "RoundMode::CAST_NONE" in source and "RoundMode::CAST_RINT" in source
    assert f"AscendC::{api}(tmp.GetWithOffset<float>" in source


def test_bf16_ops_round_trip_through_fp32(tmp_path):
    source = _emitted(tmp_path, "x * y + 1.0", "x: pypto.Tensor([4, 64], pypto.DT_BF16), "
                                               "y: pypto.Tensor([4, 64], pypto.DT_BF16)", "pypto.DT_BF16")
    assert "AscendC::GlobalTensor<bfloat16_t>" in source
    assert source.count("RoundMode::CAST_RINT") == 2 and "AscendC::Mul(tmp.GetWithOffset<float>" in source
    assert "AscendC::Power(" in _emitted(tmp_path, "pypto.pow(x, y)", "x: pypto.Tensor([4, 64], pypto.DT_FP32), "
                                                                     "y: pypto.Tensor([4, 64], pypto.DT_FP32)")


@pytest.mark.parametrize("body,params,out,message", [
    ("pypto.reshape(pypto.softmax(pypto.reshape(x, [2, 2, 64]), 1), [4, 64])", "x: pypto.Tensor([4, 64], pypto.DT_FP32)",
     "pypto.DT_FP32", "'softmax' along axis 1 of a rank-3 value (the last axis, or the rows of a 2-D value)"),
    ("pypto.cast(x, pypto.DT_BF16, pypto.CastMode.CAST_ODD)", "x: pypto.Tensor([4, 64], pypto.DT_FP32)", "pypto.DT_BF16",
     "cast fp32 -> bf16 with CAST_ODD"),
    ("x + pypto.sum(x, 0, keepdim=True)", "x: pypto.Tensor([4, 64], pypto.DT_BF16)", "pypto.DT_BF16",
     "'sum' over the rows on bf16"),
])
def test_what_the_emitter_refuses_is_located(tmp_path, body, params, out, message):
    with pytest.raises(EmitError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        _emitted(tmp_path, body, params, out)
    assert caught.value.message.endswith(UNSUPPORTED) and caught.value.span is not None and caught.value.span.line == 7


# ---- the host runtime's math APIs -------------------------------------------------------------

MATH_FAULTS = {
    "overlap": ("AscendC::Erf(a, a, t, 64);", "Erf: dst and src overlap in UB"),
    "small_tmp": ("AscendC::Erfc(b, a, t512, 64);", "Erfc: sharedTmpBuffer holds 512 bytes, the API needs at least 1792"),
    "tmp_overlap": ("AscendC::Atan(b, a, ta, 64);", "Atan: sharedTmpBuffer and dst overlap"),
    "power_overlap": ("AscendC::Power(b, a, b, t, 64);", "Power: dst and src1 overlap"),
    "int32": ("AscendC::Sinh(i, i2, t, 64);", "Sinh: dtype int32_t is not supported on A2"),
}


@pytest.mark.parametrize("name", sorted(MATH_FAULTS))
def test_math_api_rules_fault_on_the_host(tmp_path, name):
    """The API pages forbid dst overlapping a source (even completely) and a temporary below the
    minimum size; half and float only on A2."""
    call, message = MATH_FAULTS[name]
    src = ("void kernel()\n{\n"
           "    TPipe pipe; TBuf<QuePosition::VECCALC> x, tb;\n"
           "    pipe.InitBuffer(x, 4096); pipe.InitBuffer(tb, 2048);\n"
           "    LocalTensor<float> a = x.Get<float>(64), b = x.GetWithOffset<float>(64, 256);\n"
           "    LocalTensor<int32_t> i = x.GetWithOffset<int32_t>(64, 512), i2 = x.GetWithOffset<int32_t>(64, 768);\n"
           "    LocalTensor<uint8_t> t = tb.Get<uint8_t>(), t512 = tb.Get<uint8_t>(512), ta = x.Get<uint8_t>(2048);\n"
           "    AscendC::Duplicate(a, 0.5f, 64);\n"
           f"    {call}\n"
           "    (void)b; (void)i; (void)i2; (void)t; (void)t512; (void)ta;\n"
           "}\n" + FAULT_MAIN)
    proc = build_and_run(tmp_path, name, src)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert message in proc.stderr, proc.stderr


def test_math_apis_compute_in_double_and_round_once(tmp_path):
    src = r"""
void kernel()
{
    TPipe pipe; TBuf<QuePosition::VECCALC> x, tb;
    pipe.InitBuffer(x, 1024); pipe.InitBuffer(tb, 4096);
    LocalTensor<float> a = x.Get<float>(64), b = x.GetWithOffset<float>(64, 256), c = x.GetWithOffset<float>(64, 512);
    LocalTensor<uint8_t> t = tb.Get<uint8_t>();
    for (int k = 0; k < 64; ++k) { a.SetValue(k, 0.125f * k - 3.0f); c.SetValue(k, 0.5f); }
    AscendC::Erf(b, a, t, 64);
    std::printf("%.9g %.9g\n", static_cast<double>(b.GetValue(0)), static_cast<double>(b.GetValue(30)));
    AscendC::Power(b, c, a, t, 64);
    std::printf("%.9g\n", static_cast<double>(b.GetValue(0)));
}
int main() { pypto_host::Launch(1, kernel); return 0; }
"""
    proc = build_and_run(tmp_path, "math_values", src)
    assert proc.returncode == 0, proc.stderr
    f32 = lambda v: float(torch.tensor(v, dtype=torch.float32))  # noqa: E731
    erf0, erf30, pow0 = (f32(float(v)) for v in proc.stdout.split())  # %.9g round-trips a float
    assert erf0 == f32(math.erf(-3.0)) and erf30 == f32(math.erf(0.75)) and pow0 == f32(0.5 ** -3.0)


@pytest.mark.parametrize("out", ["bf16", "fp32"])
def test_bf16_matmul_runs_on_the_cube(out):
    """A bf16 matmul stopped at "a_dtype='bf16' is not supported on the cube path": its operands go through
    L1/L0 like fp16, accumulate in fp32 and leave L0C rounded once (Fixpipe F322BF16 for a bf16 result)."""
    g = torch.Generator().manual_seed(14)
    x, y = torch.randn(16, 32, generator=g).bfloat16(), torch.randn(32, 16, generator=g).bfloat16()
    got = _host_and_interp(f"matmul/bf16->{out}", {"x": x, "y": y})
    exact = x.double() @ y.double()
    torch.testing.assert_close(got.double(), exact.float().to(got.dtype).double(), rtol=CASES[f"matmul/bf16->{out}"].rtol,
                               atol=1e-6)
