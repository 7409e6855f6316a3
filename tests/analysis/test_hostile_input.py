"""Hostile input never crashes the linter (no PTO999, no exception) and gets the expected codes.

Regression tests for the fuzz findings: deep nesting of every kind (expression chains, brackets,
calls, subscripts, lists, ifs, fors, elif chains) lints; deeper than CPython parses is PTO000,
deeper than the analysis can follow is a located PTO100; huge numbers in ``unroll_list``, shapes
and literals never reach ``str()`` unguarded; the inputs that were super-linear (many kernels,
many loop(1) regions, a 1 MB line, long files, exponential helper / loop nesting) give their
results.  Only results are asserted here, never times: bench/lint_pathological.py measures them.

The last test is the no-crash property over generated and mutated programs; it runs 100 000 of
them with HYPOTHESIS_PROFILE=long (tests/conftest.py registers the profiles).
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from kernelgen import kernels, mutated

from pypto_ast import deep
from pypto_ast.analysis.engine import lint_bytes, lint_text
from pypto_ast.diagnostics import Severity, format_count, format_power
from pypto_ast.render import FORMATS, render
from pypto_ast.settings import Settings
from pypto_ast.transforms.fixer import fix_text

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import lint_pathological as gen  # noqa: E402  (the benchmark's generators: one definition of each case)

SETTINGS = Settings()


def lint(text: str, settings: Settings = SETTINGS):
    result = lint_text(text, "hostile.py", settings)
    assert result.failure is None, result.failure
    assert not [d for d in result.diagnostics if d.severity is Severity.BUG], result.diagnostics
    for fmt in FORMATS:  # every rendering of what came out works too
        render(fmt, result.diagnostics, {"hostile.py": result.text})
    return result


def codes(result) -> set:
    return {d.code for d in result.diagnostics}


# -- 1. deep nesting ------------------------------------------------------------------------
@pytest.mark.parametrize("make,n", [
    (gen.chain, 500), (gen.chain, 3000), (gen.sym_chain, 500), (gen.sym_chain, 3000),
    (gen.parens, 190), (gen.calls, 190), (gen.subscripts, 1000), (gen.lists, 190),
    (gen.nested_ifs, 95), (gen.nested_fors, 95),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_deep_nesting_lints(make, n):
    result = lint(make(n))
    assert result.parsed
    assert not codes(result) & {"PTO000", "PTO100", "PTO999"}


@pytest.mark.parametrize("expr", [
    "a" + ".exp()" * 1500,  # method chain
    "pypto.exp" + "(a)" * 1500,  # call chain f(a)(a)...
    "a" + ".T" * 1500,  # attribute chain
    "-" * 1500 + "a",  # unary chain
    "a if 1 else " * 1500 + "a",  # conditional-expression chain
    " and ".join(["a"] * 1500),
    "2 ** " * 1500 + "1",
], ids=["methods", "calls", "attributes", "unary", "ifexp", "boolop", "pow"])
def test_long_chains_lint(expr):
    lint(gen.HEAD + gen.kernel("k", f"    x = {expr}\n    c[:] = a\n"))


def test_elif_chain_lints():
    branches = "".join(f"        elif i == {j}:\n            c[:] = b\n" for j in range(1, 1500))
    body = "    for i in pypto.loop(4, name='L', idx_name='i'):\n        if i == 0:\n            c[:] = a\n" + branches
    assert lint(gen.HEAD + gen.kernel("k", body)).parsed


def test_beyond_cpython_parser_is_pto000():
    result = lint(gen.calls(500))  # "too many nested parentheses"
    assert [d.code for d in result.diagnostics] == ["PTO000"] and not result.parsed
    elifs = "if x:\n    pass\n" + "elif x:\n    pass\n" * 8000  # the parser's own stack: MemoryError
    result = lint(elifs)
    assert [d.code for d in result.diagnostics] == ["PTO000"]
    assert "nests too deeply" in result.diagnostics[0].message


def test_parser_recursion_error_is_pto000(monkeypatch):
    monkeypatch.setattr(deep, "RECURSION_LIMIT", 1000)  # ast.parse builds at most 3x this deep
    result = lint(gen.chain(5000))
    assert [d.code for d in result.diagnostics] == ["PTO000"]
    assert "nests too deeply" in result.diagnostics[0].message


def test_deeper_than_the_analysis_is_located_pto100(monkeypatch):
    monkeypatch.setattr(deep, "RECURSION_LIMIT", 3000)  # a cheap stand-in for a 150 000-term chain
    text = gen.chain(2000)
    result = lint(text)
    assert result.parsed
    [diag] = result.diagnostics
    assert (diag.code, diag.name, diag.severity) == ("PTO100", "unsupported-construct", Severity.ERROR)
    assert "nested too deeply" in diag.message
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith("    c[:] = a + a"))
    assert diag.span.start.line == line and diag.span.start.col == len("    c[:] = ")
    run = CliRunner().invoke(_cli(), ["check", "-", "--stdin-filename", "deep.py"], input=text)
    assert run.exit_code == 1, run.output  # a finding, not an internal error (2)
    assert "PTO100" in run.output and "PTO999" not in run.output


def test_pto100_can_be_ignored(monkeypatch):
    monkeypatch.setattr(deep, "RECURSION_LIMIT", 3000)
    assert lint(gen.chain(2000), Settings(ignore=("PTO100",))).diagnostics == ()


def test_deep_worker_restores_the_recursion_limit():
    before = sys.getrecursionlimit()
    lint(gen.chain(3000))
    assert sys.getrecursionlimit() == before
    with pytest.raises(ZeroDivisionError):
        deep.call(lambda: 1 // 0)
    assert sys.getrecursionlimit() == before
    assert deep.call(deep.in_worker) is True and not deep.in_worker()


def test_fix_of_a_deep_file_converges():
    text = gen.chain(1200) + "\n" + gen.loop1_regions(3).replace(gen.HEAD, "").replace("def k", "def k2")
    outcome = fix_text(text, "deep.py", SETTINGS)
    assert outcome.result.failure is None and outcome.converged
    assert outcome.applied >= 1
    ast.parse(outcome.text) if deep.in_worker() else deep.call(ast.parse, outcome.text)


def _cli():
    from pypto_ast.cli.lint import main

    return main


# -- 2. huge numbers -------------------------------------------------------------------------
def _unrolled(factors: str, body: str = "        if i == 0:\n            c[:] = a + b\n") -> str:
    return gen.HEAD + gen.kernel("k", f"    for i in pypto.loop(22, name='L', idx_name='i', unroll_list={factors}):\n{body}")


@pytest.mark.parametrize("factors", ["[1, 2, 2**31]", "[10**12]", "[2**2000]", "[1, 2, 10**12]"])
def test_huge_unroll_factor_is_reported_not_computed(factors):
    result = lint(_unrolled(factors))
    [diag] = [d for d in result.diagnostics if d.code == "PTO011"]
    assert "compiled paths" in diag.message and ("about " in diag.message or "more than 10^" in diag.message)
    assert len(diag.message) < 1000


def test_huge_unroll_factor_message():
    [diag] = [d for d in lint(_unrolled("[1, 2, 2**31]")).diagnostics if d.code == "PTO011"]
    assert "unroll_list [1, 2, 2147483648]" in diag.message
    assert "2 + 4 + 2^2147483648 = about 1.8e+646456993 compiled paths" in diag.message


@pytest.mark.parametrize("factors", ["[10**5000]", "[1, 2, 2**31, 10**12, 10**5000]", "[0x" + "f" * 4000 + "]"])
def test_unreadable_unroll_factor_is_unknown(factors):
    assert "PTO011" not in codes(lint(_unrolled(factors)))


def test_small_path_counts_stay_exact():
    [diag] = [d for d in lint(_unrolled("[1, 2, 4]")).diagnostics if d.code == "PTO011"]
    assert "2 + 4 + 16 = 22 compiled paths" in diag.message
    [diag] = [d for d in lint(_unrolled("[40]")).diagnostics if d.code == "PTO011"]
    assert "2^40 = 1099511627776 compiled paths" in diag.message


def test_huge_path_threshold_and_nested_unrolls():
    huge = Settings(cond_path_threshold=10**400)  # compared by logarithm past 2**256 paths
    assert "PTO011" not in codes(lint(_unrolled("[4]"), huge))
    assert "PTO011" not in codes(lint(_unrolled("[1200]"), huge))  # 2**1200 < 10**400
    assert "PTO011" in codes(lint(_unrolled("[1500]"), huge))  # 2**1500 > 10**400
    nested = "".join("    " * (d + 1) + f"for i{d} in pypto.loop(8, name='L{d}', idx_name='i{d}', unroll_list=[2**31]):\n"
                     for d in range(30)) + "    " * 31 + "if i29 == 0:\n" + "    " * 32 + "c[:] = a + b\n"
    assert {"PTO010", "PTO011", "PTO013"} <= codes(lint(gen.HEAD + gen.kernel("k", nested)))


def test_huge_shapes_and_tile_counts():
    text = ("import pypto\nS = (2**2000,) * 8\n@pypto.frontend.jit\n"
            "def k(a: pypto.Tensor(S, pypto.DT_FP32), c: pypto.Tensor(S, pypto.DT_FP32)):\n"
            "    pypto.set_vec_tile_shapes(1, 1, 1, 1, 1, 1, 1, 1)\n"
            "    for i in pypto.loop(4, name='L', idx_name='i', unroll_list=[2**2000]):\n        c[:] = a + a\n")
    [diag] = [d for d in lint(text).diagnostics if d.code == "PTO013"]
    assert "about 1.0e+5419 tile operations" in diag.message  # str() of the count raises ValueError


def test_format_count():
    assert [format_count(n) for n in (0, -7, 25769803776, 10**18 - 1)] == ["0", "-7", "25769803776", str(10**18 - 1)]
    assert format_count(10**18) == "1.0e+18" and format_count(-10**400) == "-1.0e+400"
    assert format_count(2**100000) == "1.0e+30103"  # str() of it raises ValueError
    assert format_count(0xF << 20000) == "6.0e+6021"
    assert format_power(2, 31) == "2147483648" and format_power(2, 2**31) == "2^2147483648"


def test_lowering_refuses_astronomical_unrolls():
    from pypto_ast import frontend
    from pypto_ast.frontend.builder import MAX_PATHS
    from pypto_ast.frontend.errors import FrontendError
    from pypto_ast.source import SourceFile

    def lower(text):
        return frontend.lower(frontend.read(SourceFile.parse(text, "k.py")))[0]

    with pytest.raises(FrontendError) as err:
        lower(_unrolled("[2**31]"))
    assert err.value.code == "PTO106"
    assert lower(_unrolled("[100]")).paths == MAX_PATHS  # 2**100 paths saturate
    assert lower(_unrolled("[1, 2, 4]")).paths < 100


@pytest.mark.parametrize("bounds", ["10**300", "0, 10**300, 7", "10**300, 0, -1", "2**63", "-(10**300), 0"])
def test_huge_loop_bounds_lint(bounds):
    # found by the 100,000-program fuzz run: len(range(10**300)) overflowed (OverflowError, PTO999)
    text = gen.HEAD + gen.kernel("k", f"    for i in pypto.loop({bounds}):\n        c[:] = a + b\n"
                                      "    n = len(range(10**300))\n")
    result = lint(text)
    assert "PTO999" not in codes(result)


@pytest.mark.parametrize("bounds, what", [("10**300", "stop"), ("2**63", "stop"), ("-(2**63) - 1, 4", "start"),
                                          ("0, 8, 2**64", "step")])
def test_lowering_refuses_loop_bounds_beyond_int64(bounds, what):
    from pypto_ast import frontend
    from pypto_ast.frontend.errors import FrontendError
    from pypto_ast.source import SourceFile

    text = gen.HEAD + gen.kernel("k", f"    for i in pypto.loop({bounds}):\n        c[:] = a + b\n")
    with pytest.raises(FrontendError) as err:
        frontend.lower(frontend.read(SourceFile.parse(text, "k.py")))
    assert err.value.code == "PTO106" and f"the {what} " in str(err.value) and "int64" in str(err.value)
    ok = gen.HEAD + gen.kernel("k", "    for i in pypto.loop(2**63 - 1):\n        c[:] = a + b\n")
    assert frontend.lower(frontend.read(SourceFile.parse(ok, "k.py")))


# -- 3. linear time: results only ---------------------------------------------------------------
def test_many_kernels():
    result = lint(gen.many_kernels(100))
    assert codes(result) <= {"PTO011", "PTO013"}


def test_many_loop1_regions_are_each_reported_and_fixed():
    result = lint(gen.loop1_regions(400))
    hits = [d for d in result.diagnostics if d.code == "PTO012"]
    assert len(hits) == 399 and sum(d.fix is not None for d in hits) == 200  # every other one per pass
    outcome = fix_text(gen.loop1_regions(12), "loops.py", SETTINGS)
    assert outcome.converged and outcome.text.count("pypto.loop(1") == 1


def test_loop1_fix_skips_what_libcst_parses_slowly():
    """libcst takes seconds on a 2000-call chain: a kernel holding one gets its PTO012 without a fix."""
    body = "    x = pypto.exp" + "(a)" * 300 + "\n" + "".join(
        f"    for _ in pypto.loop(1, name='s{j}', idx_name='s{j}'):\n        c[:] = a + b\n" for j in range(3))
    hits = [d for d in lint(gen.HEAD + gen.kernel("k", body)).diagnostics if d.code == "PTO012"]
    assert len(hits) == 3 and all(d.fix is None for d in hits)  # 3: the first follows tensor work
    plain = gen.loop1_regions(3) + "\n\nX = pypto.exp" + "(1)" * 300 + "\n"  # elsewhere in the file: fixed
    hits = [d for d in lint(plain).diagnostics if d.code == "PTO012"]
    assert len(hits) == 2 and hits[0].fix is not None


def test_one_megabyte_lines():
    for text in (
        gen.HEAD + "# " + "x" * 1_000_000 + "\n" + gen.kernel("k", "    c[:] = a + b\n"),
        gen.HEAD + "S = '" + "é" * 500_000 + "'\n" + gen.kernel("k", "    c[:] = a + b\n"),
        gen.HEAD + gen.kernel("k", "    c[:] = a + b  # " + "x" * 1_000_000 + "\n"
                              "    for _ in pypto.loop(1):\n        c[:] = a + b\n"),
    ):
        lint(text)
    [diag] = [d for d in lint(text).diagnostics if d.code == "PTO012"]
    shown = render("full", [diag], {"hostile.py": text})
    assert len(shown) < 2000  # the 1 MB line is shown as a window around the caret


@pytest.mark.parametrize("size", [50_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_long_statement_line(size):
    result = lint(gen.long_line(size))
    assert result.parsed and "PTO999" not in codes(result)


@pytest.mark.slow
def test_one_megabyte_data_line():
    assert lint(gen.long_data_line(1_000_000)).diagnostics == ()


@pytest.mark.parametrize("lines", [600, pytest.param(2500, marks=pytest.mark.slow)])
def test_long_file(lines):
    assert lint(gen.long_file(lines)).parsed


def test_exponential_helpers_and_loops_are_bounded():
    helpers = "".join(f"def h{j}(x, c):\n    h{j + 1}(x, c)\n    h{j + 1}(x, c)\n\n" for j in range(15))
    lint(gen.HEAD + helpers + "def h15(x, c):\n    c[:] = x + 1.0\n\n" + gen.kernel("k", "    h0(a, c)\n"))
    fors = "".join("    " * (j + 1) + f"for j{j} in range(2):\n" for j in range(30)) + "    " * 31 + "c[:] = a + b\n"
    assert "PTO013" in codes(lint(gen.HEAD + gen.kernel("k", fors)))
    whiles = "    n = 0\n    while n < 10**9:\n        m = 0\n        while m < 10**9:\n            m += 1\n        n += 1\n"
    lint(gen.HEAD + gen.kernel("k", whiles + "    c[:] = a\n"))


def test_recursive_helpers():
    rec = "import pypto\n\ndef h(x):\n    return g(x)\ndef g(x):\n    return h(x + 1)\n\n"
    lint(rec + gen.kernel("k", "    c[:] = h(a)\n"))


@pytest.mark.parametrize("text", [
    'f"tile {i} of {ROWS // 16}"', 'f"{i}{ROWS}"', 'f"{ROWS:>{i}}"', 'f"{i!r:>8} {ROWS!a}"', 'f"{a.shape[0]:x}"',
    'f"{ROWS:.3f}"', 'f"{ROWS:q}"',
])
def test_formatted_print_in_a_loop_is_pto007_not_a_crash(text):
    """An f-string with static and symbolic parts (the common way to print in a kernel)."""
    body = f"    for i in pypto.loop(4):\n        print({text})\n        c[:] = a + b\n"
    result = lint("ROWS = 64\n" + gen.HEAD + gen.kernel("k", body))
    assert "PTO999" not in codes(result) and "PTO007" in codes(result)


# -- 4. the no-crash property -------------------------------------------------------------------
_HOSTILE = [
    lambda n: " + ".join(["a"] * n),
    lambda n: "(" * min(n, 150) + "a" + ")" * min(n, 150),
    lambda n: "a" + "[0]" * n,
    lambda n: "a" + ".exp()" * n,
    lambda n: "[" * min(n, 150) + "1" + "]" * min(n, 150),
    lambda n: "-" * n + "1",
    lambda n: " < ".join(["i"] * n),
    lambda n: "i" + " * i" * n,
]
_NUMBERS = ["2**31", "10**12", "10**5000", "0x" + "f" * 1200, "-1", "0", "10**300"]


@st.composite
def hostile(draw) -> str:
    """A generated kernel, maybe mutated, with a deep expression, a huge number, repeated loop(1)
    regions or a long line spliced into one of its lines."""
    text = draw(st.one_of(kernels(), mutated()))
    lines = text.splitlines(True) or ["\n"]
    i = draw(st.integers(0, len(lines) - 1))
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    kind = draw(st.sampled_from(["deep", "number", "loop1", "long", "fstring", "none"]))
    if kind == "deep":
        expr = draw(st.sampled_from(_HOSTILE))(draw(st.integers(1, 3000)))
        lines.insert(i, f"{indent}x = {expr}\n")
    elif kind == "number":
        number = draw(st.sampled_from(_NUMBERS))
        lines[i] = lines[i].replace(draw(st.sampled_from(["4", "2", "1", "16", "32"])), number, 1)
    elif kind == "loop1":
        lines.insert(i, f"{indent}for _ in pypto.loop(1):\n{indent}    c[:] = a\n" * draw(st.integers(1, 60)))
    elif kind == "long":
        lines[i] = lines[i].rstrip("\r\n") + "  # " + "x" * draw(st.integers(1, 200_000)) + "\n"
    elif kind == "fstring":
        lines.insert(i, f"{indent}print({draw(fstrings())})\n")
    return "".join(lines)


_FIELD_VALUES = ["i", "a", "ROWS // 16", "a.shape[0]", "1.5", "'s'", "[1, 2]", "None", "x", "i * 2 + 1", "10**300"]


@st.composite
def fstrings(draw, depth: int = 0) -> str:
    """An f-string of static and symbolic fields: conversions, format specs (themselves with fields),
    literal text with braces doubled."""
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(["tile ", " of ", "{{", "}}", ": ", "", "%d"])))
            continue
        value = draw(st.sampled_from(_FIELD_VALUES))
        conversion = draw(st.sampled_from(["", "!r", "!s", "!a"]))
        spec = draw(st.sampled_from(["", ":>8", ":.3f", ":d", ":x", ":{w}", ":{i}", ":,"]))
        if spec and "{" in spec and depth:
            spec = ""
        parts.append("{" + value + conversion + spec + "}")
    return "f" + repr("".join(parts)).replace("\\'", "")


FUZZ = settings.get_profile("fuzz-long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else "fuzz-quick")


@FUZZ
@given(hostile())
def test_hostile_programs_never_crash(text):
    result = lint(text)
    assert "PTO999" not in codes(result)
    data = lint_bytes(text.encode("utf-8", "surrogatepass"), "hostile.py", SETTINGS)
    assert data.failure is None
