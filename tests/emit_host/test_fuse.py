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
from hypothesis import given, settings
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


def _kernel(tmp_path, body: list, rows: int, cols: int, tile: int):
    src = textwrap.dedent(f"""
        import pypto
        F32 = pypto.DT_FP32


        @pypto.frontend.jit
        def chain(x: pypto.Tensor(({rows}, {cols}), F32), y: pypto.Tensor(({rows}, {cols}), F32),
                  out: pypto.Tensor(({rows}, {cols}), F32)):
            pypto.set_vec_tile_shapes({tile}, {cols})
    """)
    src += "".join(f"    {line}\n" for line in body)
    path = tmp_path / f"chain_{abs(hash(tuple(body))) % 10**8}_{rows}x{cols}.py"
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


OPS = st.one_of(
    st.tuples(st.sampled_from(sorted(UNARY)), st.none()),
    st.tuples(st.sampled_from(sorted(BINARY)), st.sampled_from(["x", "y"])),
    st.tuples(st.sampled_from(sorted(SCALAR)), st.sampled_from([0.5, -1.25, 3.0, -0.0, 1e-3, 100.0])),
)


@settings(max_examples=12, deadline=None)
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
    const TensorDesc a = at(0, 1024), b = at(4096, 1024), c = at(8192, 1024);
    const TensorDesc* ok[] = {&a, &b, &c};
    if (!AscendC::detail::FuseOperands(ok, 3, 1024)) return 1;           // disjoint whole slots
    const TensorDesc half = at(2048, 1024);
    const TensorDesc* part[] = {&a, &half};
    if (AscendC::detail::FuseOperands(part, 2, 1024)) return 2;          // overlapping, not the same start
    const TensorDesc same = at(0, 1024);
    const TensorDesc* twice[] = {&a, &same};
    if (AscendC::detail::FuseOperands(twice, 2, 1024)) return 3;         // one buffer as two slots
    if (AscendC::detail::FuseOperands(ok, 3, 1025)) return 4;            // count past an operand
    const TensorDesc odd = at(4100, 512);
    const TensorDesc* misaligned[] = {&a, &odd};
    if (AscendC::detail::FuseOperands(misaligned, 2, 256)) return 5;     // not 32-byte aligned
    TensorDesc unbound;
    const TensorDesc* none[] = {&a, &unbound};
    if (AscendC::detail::FuseOperands(none, 2, 8)) return 6;             // never allocated
    if (AscendC::detail::FuseOperands(ok, 3, -1)) return 7;              // negative count: the call faults
    pypto_host_set_fuse(0);
    const bool off = AscendC::detail::FuseOperands(ok, 3, 1024);
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
    out: list = []
    runs = fuse.Runs(out)
    refs = [f"t{k}" for k in range(9)]
    for k in range(8):  # each call adds a new slot: t0 -> t1, t1 -> t2, ...
        line = f"        AscendC::Exp({refs[k + 1]}, {refs[k]}, 64);"
        runs.add([], [line], fuse.step_of(fuse.Step("Exp", refs[k + 1], (refs[k],), None, 64), [line]))
    runs.flush()
    heads = [ln for ln in out if "FuseF32" in ln]
    assert len(heads) == 2 and "5 ops" in heads[0] and "3 ops" in heads[1]  # 6 slots, then the rest
    assert sum(ln.strip().startswith("AscendC::Exp(") for ln in out) == 8
    # a step whose lines are not its one call is not fused
    assert fuse.step_of(fuse.Step("Exp", "a", ("b",), None, 64), ["        AscendC::Exp(c, b, 64);"]) is None
    assert fuse.step_of(fuse.Step("Exp", "a", ("b",), None, 64),
                        ["        for (r = 0; r < 4; ++r) {", "            AscendC::Exp(a, b, 64);", "        }"]) is None
