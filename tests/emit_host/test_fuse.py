"""Fused runs of fp32 elementwise calls on the host (emit/fuse.py, host/pypto_host_fuse.h,
docs/design.md §34): which calls the emitter wraps, that the one-pass form leaves the values the
calls leave, bit for bit (infinities, signed zeros, subnormals, exp's overflow and underflow,
tails of fewer than 32 elements; NaN where NaN is, its payload unspecified), that it is really
taken, and that it steps aside whenever a call would fault or the operands overlap."""

from __future__ import annotations

import ctypes
import re
import shutil
import textwrap

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pypto_ast import knobs, live, pipeline
from pypto_ast.emit import fuse
from pypto_ast.emit.build import load_library
from pypto_ast.emit.host_runtime import build_program

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host build needs one",
)

SPECIALS = [float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38,
            -2.5e-39, 88.7, 89.5, -103.5, -104.5, 3.4e38, -3.4e38, 1.0, -1.0, 0.5]

UNARY = {"exp": "pypto.exp({v})", "abs": "pypto.abs({v})", "sqrt": "pypto.sqrt({v})", "relu": "pypto.relu({v})",
         "reciprocal": "pypto.reciprocal({v})"}
BINARY = {"add": "{v} + {w}", "sub": "{v} - {w}", "mul": "{v} * {w}", "div": "{v} / {w}",
          "maximum": "pypto.maximum({v}, {w})", "minimum": "pypto.minimum({v}, {w})"}
SCALAR = {"adds": "{v} + {c}", "subs": "{v} - {c}", "muls": "{v} * {c}", "maxs": "pypto.maximum({v}, {c})",
          "mins": "pypto.minimum({v}, {c})"}


def _kernel(tmp_path, body: list, rows: int, cols: int, tile: int, dt: str = "DT_FP32"):
    src = textwrap.dedent(f"""
        import pypto
        F32 = pypto.{dt}


        @pypto.frontend.jit
        def chain(x: pypto.Tensor(({rows}, {cols}), F32), y: pypto.Tensor(({rows}, {cols}), F32),
                  out: pypto.Tensor(({rows}, {cols}), F32)):
            pypto.set_vec_tile_shapes({tile}, {cols})
    """)
    src += "".join(f"    {line}\n" for line in body)
    path = tmp_path / f"chain_{abs(hash(tuple(body))) % 10**8}_{rows}x{cols}_{dt}.py"
    path.write_text(src)
    return live.find_kernel(live.load_module(str(path)))


def _chain(ops: list) -> list:
    """Kernel lines for ops (name, operand) applied to a running value v0 = x."""
    lines, v = [], "x"
    for k, (name, arg) in enumerate(ops):
        nv = f"v{k}"
        if name in UNARY:
            expr = UNARY[name].format(v=v)
        elif name in BINARY:
            expr = BINARY[name].format(v=v, w=arg)
        else:
            expr = SCALAR[name].format(v=v, c=repr(arg))
        lines.append(f"{nv} = {expr}")
        v = nv
    lines.append(f"out[:] = {v}")
    return lines


def _run(program, x, y, on: bool, monkeypatch) -> tuple:
    """The output with fusion on or off, and how many runs the library took fused meanwhile."""
    from pypto_ast.emit import host_backend

    libs = []
    real = host_backend.load_library

    def load(path):
        lib = real(path)
        lib.pypto_host_fused_runs.restype = ctypes.c_uint64
        libs.append((lib, int(lib.pypto_host_fused_runs())))
        return lib

    monkeypatch.setattr(knobs, "host_fuse", on)
    monkeypatch.setattr(host_backend, "load_library", load)
    inputs = {"x": x.clone(), "y": y.clone(), "out": torch.zeros_like(x)}
    pipeline.run(program, inputs, "host")
    monkeypatch.setattr(host_backend, "load_library", real)
    return inputs["out"], sum(int(lib.pypto_host_fused_runs()) - n for lib, n in libs)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same bits, NaNs aside: where NaN appears is specified, its sign and payload are not
    (docs/semantics.md), and g++ may take either operand's NaN in a vectorised a + b."""
    nan = torch.isnan(a)
    return torch.equal(nan, torch.isnan(b)) and torch.equal(a[~nan].view(torch.int32), b[~nan].view(torch.int32))


NINE = [("add", "y"), ("muls", 0.5), ("exp", None), ("sub", "y"), ("maximum", "x"), ("abs", None),
        ("adds", 1.0), ("sqrt", None), ("div", "v5")]


def test_the_nine_op_chain_is_one_fused_run_and_the_calls_stay(tmp_path):
    program = pipeline.lower(_kernel(tmp_path, _chain(NINE), 64, 1024, 4))
    files = pipeline.emit(program, "ascendc")
    text = "\n".join(v for k, v in files.items() if k.endswith("_k1.cpp"))
    assert text.count("pypto_host::FuseF32<") == 1, text
    assert "9 ops in one pass on the host" in text
    head = text.index("#if defined(PYPTO_HOST_FUSE)")
    assert text.index("FuseF32", head) < text.index("#endif", head) < text.index("AscendC::Add(", head)
    calls = re.findall(r"^            AscendC::(\w+)\(", text, re.M)
    assert calls == ["Add", "Muls", "Exp", "Sub", "Max", "Abs", "Adds", "Sqrt", "Div"]


def test_no_run_across_a_reduction_or_a_broadcast(tmp_path):
    body = ["a = x + y", "b = a * 2.0", "s = pypto.sum(b, -1, keepdim=True)", "c = b - s", "d = pypto.exp(c)",
            "out[:] = d * 0.5"]
    program = pipeline.lower(_kernel(tmp_path, body, 16, 64, 4))
    text = "\n".join(v for k, v in pipeline.emit(program, "ascendc").items() if k.endswith(".cpp"))
    heads = re.findall(r"FuseF32<.*?// (\d+) ops in one pass", text)
    assert heads == ["2", "2"], text  # add+mul before the sum; exp+mul after the broadcast subtraction


@pytest.mark.parametrize("rows,cols,tile", [(64, 1024, 4), (7, 40, 3), (5, 8, 1), (33, 100, 2)])
def test_fused_run_leaves_the_calls_bits_on_special_values(tmp_path, monkeypatch, rows, cols, tile):
    program = pipeline.lower(_kernel(tmp_path, _chain(NINE + [("maxs", -0.0), ("mins", 2.5), ("relu", None),
                                                             ("reciprocal", None), ("minimum", "y")]),
                                     rows, cols, tile))
    g = torch.Generator().manual_seed(rows * cols)
    n = rows * cols
    pool = torch.tensor(SPECIALS)
    x = torch.where(torch.rand(n, generator=g) < 0.3, pool[torch.randint(len(SPECIALS), (n,), generator=g)],
                    torch.randn(n, generator=g) * 40).reshape(rows, cols)
    y = torch.where(torch.rand(n, generator=g) < 0.3, pool[torch.randint(len(SPECIALS), (n,), generator=g)],
                    torch.randn(n, generator=g) * 3).reshape(rows, cols)
    fused, taken = _run(program, x, y, True, monkeypatch)
    calls, none = _run(program, x, y, False, monkeypatch)
    assert _same(fused, calls)
    assert none == 0
    if _avx2():
        assert taken > 0  # the fused path really ran
    interp = {"x": x.clone(), "y": y.clone(), "out": torch.zeros_like(x)}
    pipeline.run(program, interp, "interp")
    torch.testing.assert_close(fused, interp["out"], rtol=2e-6, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("rows,cols,tile", [(16, 1024, 8), (7, 40, 3)])
def test_bf16_chain_is_one_run_with_its_casts_and_leaves_the_calls_bits(tmp_path, monkeypatch, rows, cols, tile):
    """bf16 computes in fp32 between casts (A2 has no bf16 arithmetic): the widening and rounding
    Casts join the run, so the 6-op chain's 22 calls are one pass."""
    ops = [("add", "y"), ("muls", 0.5), ("maximum", "y"), ("sub", "x"), ("abs", None), ("adds", 1.0),
           ("exp", None), ("mins", -0.0), ("div", "y")]
    program = pipeline.lower(_kernel(tmp_path, _chain(ops), rows, cols, tile, "DT_BF16"))
    text = "\n".join(v for k, v in pipeline.emit(program, "ascendc").items() if k.endswith("_k1.cpp"))
    assert re.search(r"Step<pypto_host::fuse::Widen, .*Step<pypto_host::fuse::Round, ", text), text
    g = torch.Generator().manual_seed(rows)
    n = rows * cols
    pool = torch.tensor(SPECIALS)
    x = torch.where(torch.rand(n, generator=g) < 0.3, pool[torch.randint(len(SPECIALS), (n,), generator=g)],
                    torch.randn(n, generator=g) * 40).reshape(rows, cols).bfloat16()
    y = (torch.randn(rows, cols, generator=g) * 3).bfloat16()
    y.view(-1)[::5] = torch.tensor([3.4e38, -0.0, float("inf"), 1e-39], dtype=torch.bfloat16).repeat(n)[: y.view(-1)[::5].numel()]
    fused, taken = _run(program, x, y, True, monkeypatch)
    calls, _ = _run(program, x, y, False, monkeypatch)
    assert _same(fused.float(), calls.float())
    assert torch.equal(fused.view(torch.int16)[~torch.isnan(fused)], calls.view(torch.int16)[~torch.isnan(calls)])
    if _avx2():
        assert taken > 0


ROWWISE = {
    "softmax": ["m = pypto.amax(x, -1, keepdim=True)", "e = pypto.exp(x - m)", "d = pypto.sum(e, -1, keepdim=True)",
                "out[:] = e / d"],
    "layernorm": ["mean = pypto.sum(x, -1, keepdim=True) * 0.015625", "d = x - mean",
                  "var = pypto.sum(d * d, -1, keepdim=True) * 0.015625",
                  "out[:] = d * pypto.rsqrt(var + 1e-5) * y[0:1, :] + y[1:2, :]"],
}


@pytest.mark.parametrize("name", sorted(ROWWISE))
def test_row_loops_fused_leave_the_calls_bits(tmp_path, monkeypatch, name):
    """Softmax's Duplicate + Div per row and layernorm's merged rows (x rstd, x gamma, + beta)."""
    rows, cols = 13, 64
    program = pipeline.lower(_kernel(tmp_path, ROWWISE[name], rows, cols, 4))
    text = "\n".join(v for k, v in pipeline.emit(program, "ascendc").items() if k.endswith("_k1.cpp"))
    assert re.search(r"^            if \(!pypto_host::FuseF32<", text, re.M), text  # a run inside a row loop
    g = torch.Generator().manual_seed(7)
    x = torch.randn(rows, cols, generator=g) * 30
    x[3, 5], x[4, :], x[5, 7], x[6, 0] = float("inf"), -0.0, float("nan"), -1e-40
    y = torch.randn(rows, cols, generator=g)
    fused, taken = _run(program, x, y, True, monkeypatch)
    calls, _ = _run(program, x, y, False, monkeypatch)
    assert _same(fused, calls)
    if _avx2():
        assert taken > 0


OPS = st.one_of(
    st.tuples(st.sampled_from(sorted(UNARY)), st.none()),
    st.tuples(st.sampled_from(sorted(BINARY)), st.sampled_from(["x", "y"])),
    st.tuples(st.sampled_from(sorted(SCALAR)), st.sampled_from([0.5, -1.25, 3.0, -0.0, 1e-3, 100.0])),
)


@settings(max_examples=12, deadline=None)
@example(ops=[("abs", None), ("mins", -0.0)], rows=1, cols=8, tile=1, seed=0)  # once +0 where the calls give -0
@given(ops=st.lists(OPS, min_size=2, max_size=10), rows=st.integers(1, 12), cols=st.sampled_from([8, 24, 40, 64, 96]),
       tile=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_random_fused_chains_leave_the_calls_bits(tmp_path_factory, ops, rows, cols, tile, seed):
    with pytest.MonkeyPatch.context() as mp:
        program = pipeline.lower(_kernel(tmp_path_factory.mktemp("rand"), _chain(ops), rows, cols, min(tile, rows)))
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(rows, cols, generator=g) * 4
        y = torch.randn(rows, cols, generator=g)
        x.view(-1)[:: 7] = torch.tensor(SPECIALS).repeat(rows * cols // 7 // len(SPECIALS) + 1)[: x.view(-1)[::7].numel()]
        assert _same(_run(program, x, y, True, mp)[0], _run(program, x, y, False, mp)[0])


# ---- the checks, at the runtime's level ----------------------------------------------------------
CHECKS = r"""
#include "kernel_operator.h"
using AscendC::detail::TensorDesc;

// 0 when every check holds, else the number of the first that failed.
extern "C" int fuse_checks()
{
    alignas(64) static uint8_t ub[1 << 16];
    auto at = [&](uint32_t addr, uint32_t count) { TensorDesc d; d.ub = ub; d.addr = addr; d.count = count; return d; };
    static const uint32_t four[] = {4, 4, 4}, mixed[] = {4, 2};
    const TensorDesc a = at(0, 1024), b = at(4096, 1024), c = at(8192, 1024);
    const TensorDesc* ok[] = {&a, &b, &c};
    if (!AscendC::detail::FuseOperands(ok, four, 3, 1024)) return 1;           // disjoint whole slots
    const TensorDesc half = at(2048, 1024);
    const TensorDesc* part[] = {&a, &half};
    if (AscendC::detail::FuseOperands(part, four, 2, 1024)) return 2;          // overlapping, not the same start
    const TensorDesc same = at(0, 1024);
    const TensorDesc* twice[] = {&a, &same};
    if (AscendC::detail::FuseOperands(twice, four, 2, 1024)) return 3;         // one buffer as two slots
    if (AscendC::detail::FuseOperands(ok, four, 3, 1025)) return 4;            // count past an operand
    const TensorDesc odd = at(4100, 512);
    const TensorDesc* misaligned[] = {&a, &odd};
    if (AscendC::detail::FuseOperands(misaligned, four, 2, 256)) return 5;     // not 32-byte aligned
    TensorDesc unbound;
    const TensorDesc* none[] = {&a, &unbound};
    if (AscendC::detail::FuseOperands(none, four, 2, 8)) return 6;             // never allocated
    if (AscendC::detail::FuseOperands(ok, four, 3, -1)) return 7;              // negative count: the call faults
    const TensorDesc h = at(4096, 2048);  // 1024 bf16 right after 1024 floats: disjoint ...
    const TensorDesc* halves[] = {&a, &h};
    if (!AscendC::detail::FuseOperands(halves, mixed, 2, 1024)) return 9;
    const TensorDesc h2 = at(2048, 2048);  // ... not so at byte 2048 (the floats reach 4096)
    const TensorDesc* clash[] = {&a, &h2};
    if (AscendC::detail::FuseOperands(clash, mixed, 2, 1024)) return 10;
    pypto_host_set_fuse(0);
    const bool off = AscendC::detail::FuseOperands(ok, four, 3, 1024);
    pypto_host_set_fuse(1);
    if (off) return 8;                                                    // fusion off
    return 0;
}
"""


def test_fused_runs_step_aside_where_a_call_would_fault_or_operands_overlap():
    if not _avx2():
        pytest.skip("this CPU has no AVX2: the fused path is never taken (FuseOperands is false)")
    source = CHECKS.replace('#include "kernel_operator.h"',
                            '#include "kernel_operator.h"\nextern "C" void pypto_host_set_fuse(int on);')
    lib = load_library(build_program({"fuse_checks.cpp": source}, extra_flags=("-Wall", "-Werror")))
    lib.fuse_checks.restype = ctypes.c_int
    assert lib.fuse_checks() == 0


def _avx2() -> bool:
    try:
        return " avx2" in open("/proc/cpuinfo").read()
    except OSError:
        return True


def test_runs_split_at_the_slot_and_scalar_limits():
    refs = [f"t{k}" for k in range(11)]
    body = [f"        AscendC::Exp({refs[k + 1]}, {refs[k]}, 64);" for k in range(10)]  # a new slot each
    out = fuse.fuse_body(body, set(refs))
    heads = [ln for ln in out if "FuseF32" in ln]
    assert len(heads) == 2 and "7 ops" in heads[0] and "3 ops" in heads[1]  # 8 slots, then the rest
    assert sum(ln.strip().startswith("AscendC::Exp(") for ln in out) == 10
    # not fused: an operand not known to be float, another count, a call of another form
    assert fuse.parse_call("        AscendC::Exp(h0, t1, 64);", set(refs)) is None
    mixed = fuse.fuse_body(["        AscendC::Exp(t1, t0, 64);", "        AscendC::Exp(t2, t1, 32);"], set(refs))
    assert not any("FuseF32" in ln for ln in mixed)
    assert fuse.parse_call("        AscendC::Add(t1, t0, t2, nc);", set(refs)) is None  # a count not known here
    assert fuse.parse_call("        AscendC::Exp(work.Get<float>(), tmp.GetWithOffset<float>(64, 0), 64);", set()) \
        == fuse.Step("Exp", "work.Get<float>()", ("tmp.GetWithOffset<float>(64, 0)",), None, 64)


def test_adjacent_row_loops_merge_only_without_a_scalar_read_in_the_later_ones():
    f32 = {"l0", "l1", "l2", "o3"}
    loop = lambda *body: ["        for (uint32_t r = 0; r < 4u; ++r) {", *("            " + b for b in body), "        }"]
    body = (loop("const float s = tmp.GetWithOffset<float>(64, 0).GetValue(r * 8);",
                 "AscendC::Muls(l0[r * 64], l0[r * 64], s, 64);")
            + ['#line 12 "k.py"'] + loop("AscendC::Mul(l0[r * 64], l0[r * 64], l1, 64);")
            + loop("AscendC::Add(o3[r * 64], l0[r * 64], l2, 64);")
            + loop("const float s = tmp.GetWithOffset<float>(64, 0).GetValue(r * 8);",
                   "AscendC::Adds(o3[r * 64], o3[r * 64], s, 64);"))
    out = fuse.fuse_body(body, f32)
    assert sum(ln.startswith("        for (") for ln in out) == 2  # three merged; the one reading s stays apart
    head = next(ln for ln in out if "FuseF32" in ln)
    assert "3 ops" in head and "{static_cast<float>(s)}" in head and "l0[r * 64], l1, l2, o3[r * 64]" in head


def test_a_whole_tile_call_after_a_row_loop_joins_it_only_on_the_loops_rows():
    f32 = {"l0", "l1", "o3"}
    head = "        for (uint32_t r = 0; r < 4u; ++r) {"
    scalar = "            const float s = tmp.GetWithOffset<float>(4096, 0).GetValue(r * 8);"
    adds = "            AscendC::Adds(l0[r * 1024], l0[r * 1024], s, 1024);"
    # softmax: x - max per row, then exp over the tile: one run of Adds and Exp per row
    out = fuse.fuse_body([head, scalar, adds, "        }", '#line 10 "k.py"', "        AscendC::Exp(l0, l0, 4096);  // %2 = exp",
                          "        AscendC::ReduceSum(tmp.GetWithOffset<float>(4096, 0), l0, work.Get<float>(), 4096);"], f32)
    assert "                AscendC::Exp(l0[r * 1024], l0[r * 1024], 1024);  // %2 = exp" in out
    assert "2 ops" in next(ln for ln in out if "FuseF32" in ln)
    assert out[-1].startswith("        AscendC::ReduceSum(")  # not a count-form call: stays after the loop
    # not joined: a destination the loop reads whole (the scalars' buffer, a broadcast row), another
    # count, a tile not taken row by row in the loop, a loop that writes more than row r
    for tail, loop_body in [("        AscendC::Mul(tmp.GetWithOffset<float>(4096, 0), l0, l0, 4096);", [scalar, adds]),
                            ("        AscendC::Exp(l1, l1, 4096);", [scalar, "            AscendC::Add(l0[r * 1024], l0[r * 1024], l1, 1024);"]),
                            ("        AscendC::Exp(l0, l0, 2048);", [scalar, adds]),
                            ("        AscendC::Exp(o3, l0, 4096);", [scalar, adds]),
                            ("        AscendC::Exp(l0, l0, 4096);", [scalar, "            AscendC::Adds(l1, l0[r * 1024], s, 1024);"])]:
        out = fuse.fuse_body([head, *loop_body, "        }", tail], f32)
        assert out[-1] == tail, (tail, out)


def test_softmax_runs_its_shift_and_exp_as_one_pass_per_row(tmp_path, monkeypatch):
    rows, cols = 13, 64
    program = pipeline.lower(_kernel(tmp_path, ROWWISE["softmax"], rows, cols, 4))
    text = "\n".join(v for k, v in pipeline.emit(program, "ascendc").items() if k.endswith("_k1.cpp"))
    assert re.search(r"Step<pypto_host::fuse::Adds, 0, 0, 0>, pypto_host::fuse::Step<pypto_host::fuse::Exp, 0, 0, 0>", text), text
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(3)) * 20
    x[2, 3], x[5, :] = float("-inf"), 0.0
    fused, _ = _run(program, x, x, True, monkeypatch)
    calls, _ = _run(program, x, x, False, monkeypatch)
    assert _same(fused, calls)
    torch.testing.assert_close(fused, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)
