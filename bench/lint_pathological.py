"""Lint time on pathological inputs: is it linear in the file, and does anything crash?

  python bench/lint_pathological.py [--timeout 120] [--case NAME ...] [--no-render] [--cli]

Each case is generated here and linted in-process (``engine.lint_text`` with the default
settings, then the ``full`` rendering, as ``pypto-lint`` does) in a child process, so a case
that hangs is cut off after ``--timeout`` seconds (wall) and reported as ``>T``.  Printed per
case: CPU seconds of the lint (all threads; wall time beside it), the codes found, whether anything crashed (a PTO999 or an exception), and for the
families the ratio ``t(next) / t(this)`` next to the size ratio (linear: the two agree, e.g.
about 2 when the size doubles).  No assertion on time is made anywhere (tests/analysis/
test_hostile_input.py checks the same inputs for results only).  ``--cli`` times the whole
``pypto-lint`` process on the case written to a file instead (start-up, the proofs of the safe
fixes it counts as fixable, rendering), CPU of the child process.

In-process cases also print two floors measured on the same text in the same child: CPython's
``ast.parse`` (nothing that reads the tree can be cheaper) and pyflakes (``pip install pyflakes``,
a pure-Python linter), each with the lint's multiple of it.  A 1 MB line of statements is 35,000
statements to analyse, and ``ast.parse`` alone takes over a second on it: the goal there is a
small constant multiple of the parse, linear in the size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HEAD = "import pypto\n\n"
SIG = (
    "(a: pypto.Tensor((32, 32), pypto.DT_FP32), b: pypto.Tensor((32, 32), pypto.DT_FP32),\n"
    "      c: pypto.Tensor((32, 32), pypto.DT_FP32)):\n"
)


def kernel(name: str, body: str) -> str:
    return f"@pypto.frontend.jit\ndef {name}{SIG}    pypto.set_vec_tile_shapes(16, 16)\n{body}"


# -- generators -------------------------------------------------------------------------
def many_kernels(n: int) -> str:
    """``n`` six-line kernels, each with a loop and a symbolic branch."""
    body = (
        "    for i in pypto.loop(4, name='L', idx_name='i', unroll_list=[1, 2]):\n"
        "        if i == 0:\n            c[:] = a + b\n"
    )
    return HEAD + "\n\n".join(kernel(f"k{j}", body) for j in range(n))


def loop1_regions(k: int) -> str:
    """One kernel with ``k`` consecutive ``pypto.loop(1)`` regions (PTO012 on each)."""
    body = "".join(f"    for _ in pypto.loop(1, name='s{j}', idx_name='s{j}'):\n        c[:] = a + b\n" for j in range(k))
    return HEAD + kernel("k", body)


def long_line(size: int) -> str:
    """A kernel whose body is one line of ``size`` bytes: ``;``-separated symbolic statements."""
    stmt = "t = pypto.view(a, [16, 16], [i * 16, 0]); c[:] = t + b; "
    reps = max(1, (size - 200) // len(stmt))
    return HEAD + kernel("k", "    for i in pypto.loop(2, name='L', idx_name='i'):\n        " + stmt * reps + "\n")


def long_data_line(size: int) -> str:
    """A 1 MB module-level list literal used as a kernel constant."""
    items = ", ".join(str(i % 97) for i in range(size // 4))
    return HEAD + f"DATA = [{items}]\n\n" + kernel("k", "    c[:] = a + DATA[3]\n")


def long_file(lines: int) -> str:
    """A kernel of ``lines`` lines of symbolic views and ops inside a loop."""
    body = ["    for i in pypto.loop(8, name='L', idx_name='i'):\n"]
    for j in range(lines // 2):
        body.append(f"        t{j % 50} = pypto.view(a, [16, 16], [i * 16 + {j % 7}, 0])\n")
        body.append(f"        c[:] = t{j % 50} + b * {j}.0\n")
    return HEAD + kernel("k", "".join(body))


def chain(n: int) -> str:
    """``c[:] = a + a + ... + a`` with ``n`` terms (a left-deep BinOp tree ``n`` deep)."""
    return HEAD + kernel("k", "    c[:] = " + " + ".join(["a"] * n) + "\n")


def sym_chain(n: int) -> str:
    """A symbolic scalar chain ``i + i + ... + i`` used as an offset inside a loop."""
    expr = " + ".join(["i"] * n)
    return HEAD + kernel("k", f"    for i in pypto.loop(4, name='L', idx_name='i'):\n        t = pypto.view(a, [16, 16], [{expr}, 0])\n        c[:] = t\n")


def parens(n: int) -> str:
    return HEAD + kernel("k", "    c[:] = " + "(" * n + "a" + ")" * n + "\n")


def calls(n: int) -> str:
    return HEAD + kernel("k", "    c[:] = " + "pypto.exp(" * n + "a" + ")" * n + "\n")


def subscripts(n: int) -> str:
    return HEAD + kernel("k", "    x = a" + "[0]" * n + "\n    c[:] = a\n")


def lists(n: int) -> str:
    return HEAD + kernel("k", "    x = " + "[" * n + "1" + "]" * n + "\n    c[:] = a\n")


def nested_ifs(n: int) -> str:
    body = "    for i in pypto.loop(4, name='L', idx_name='i'):\n"
    for d in range(n):
        body += "    " * (d + 2) + f"if i == {d % 4}:\n"
    body += "    " * (n + 2) + "c[:] = a + b\n"
    return HEAD + kernel("k", body)


def nested_fors(n: int) -> str:
    body = ""
    for d in range(n):
        body += "    " * (d + 1) + f"for i{d} in pypto.loop(2, name='L{d}', idx_name='i{d}'):\n"
    body += "    " * (n + 1) + "c[:] = a + b\n"
    return HEAD + kernel("k", body)


_UNROLLS = {1: "[1, 2, 2**31]", 2: "[10**12]", 3: "[10**5000]", 4: "[2**2000]"}


def huge_unroll(n: int) -> str:
    """A cond in a loop unrolled by a huge factor (n picks it: 2**31, 10**12, 10**5000, 2**2000)."""
    return HEAD + kernel(
        "k",
        f"    for i in pypto.loop(22, name='L', idx_name='i', unroll_list={_UNROLLS[n]}):\n"
        "        if i == 0:\n            c[:] = a + b\n",
    )


def methods(n: int) -> str:
    """``a.exp().exp()...``: every call's callee holds the whole chain below it."""
    return HEAD + kernel("k", "    x = a" + ".exp()" * n + "\n    c[:] = x\n")


def call_chain(n: int) -> str:
    return HEAD + kernel("k", "    x = pypto.exp" + "(a)" * n + "\n    c[:] = a\n")


def elif_chain(n: int) -> str:
    branches = "".join(f"        elif i == {j}:\n            c[:] = b\n" for j in range(1, n))
    return HEAD + kernel("k", "    for i in pypto.loop(4, name='L', idx_name='i'):\n        if i == 0:\n"
                              "            c[:] = a\n" + branches)


def static_fors(n: int) -> str:
    """``n`` nested ``for j in range(2)``: 2**n iterations if every one were unrolled."""
    body = "".join("    " * (d + 1) + f"for j{d} in range(2):\n" for d in range(n))
    return HEAD + kernel("k", body + "    " * (n + 1) + "c[:] = a + b\n")


def helpers(n: int) -> str:
    """Helpers calling the next one twice, ``n`` deep: 2**n inlined calls if all were followed."""
    defs = "".join(f"def h{j}(x, c):\n    h{j + 1}(x, c)\n    h{j + 1}(x, c)\n\n" for j in range(n))
    return HEAD + defs + f"def h{n}(x, c):\n    c[:] = x + 1.0\n\n" + kernel("k", "    h0(a, c)\n")


FAMILIES = {
    "kernels": (many_kernels, [10, 25, 50, 100]),
    "loop1": (loop1_regions, [100, 200, 400]),
    "long_line": (long_line, [250_000, 500_000, 1_000_000]),
    "data_line": (long_data_line, [1_000_000]),
    "long_file": (long_file, [1250, 2500, 5000]),
    "chain": (chain, [500, 1000, 2000]),
    "sym_chain": (sym_chain, [500, 1000]),
    "parens": (parens, [100, 190]),
    "calls": (calls, [100, 500, 1000]),
    "subscripts": (subscripts, [500, 1000]),
    "lists": (lists, [100, 190]),
    "nested_ifs": (nested_ifs, [50, 99]),
    "nested_fors": (nested_fors, [50, 99]),
    "huge_unroll": (huge_unroll, [1, 2, 3, 4]),
    "methods": (methods, [1000, 2000]),
    "call_chain": (call_chain, [1000, 2000]),
    "elif_chain": (elif_chain, [1000, 2000]),
    "static_fors": (static_fors, [10, 15, 20]),
    "helpers": (helpers, [10, 14]),
}


def run_cli(family: str, n: int) -> dict:
    import resource
    import shutil
    import tempfile

    text = FAMILIES[family][0](n)
    exe = shutil.which("pypto-lint") or sys.exit("pypto-lint is not installed (pip install -e .)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.py"
        path.write_text(text)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([exe, "--output-format", "json", "-q", str(path)], capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = json.loads(proc.stdout or "[]") if proc.stdout.strip().startswith("[") else []
    codes = Counter(d["code"] for d in found)
    return {"seconds": cpu, "wall": wall, "codes": dict(sorted(codes.items())), "crash": proc.returncode == 2
            and "PTO999" in proc.stdout + proc.stderr, "bytes": len(text), "exit": proc.returncode}


def run_one(family: str, n: int, render: bool) -> dict:
    sys.path.insert(0, str(ROOT))
    from pypto_ast.analysis.engine import lint_text
    from pypto_ast.diagnostics import Severity
    from pypto_ast.render import render as render_text
    from pypto_ast.settings import Settings

    text = FAMILIES[family][0](n)
    warm = loop1_regions(2)  # imports (front end, rules, libcst) are not the case's time
    render_text("full", lint_text(warm, "warm.py", Settings()).diagnostics, {"warm.py": warm})
    start, cpu = time.perf_counter(), time.process_time()
    result = lint_text(text, "case.py", Settings())
    if render:
        render_text("full", result.diagnostics, {"case.py": result.text})
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    codes = Counter(d.code for d in result.diagnostics)
    bug = result.failure is not None or any(d.severity is Severity.BUG for d in result.diagnostics)
    return {"seconds": cpu, "wall": seconds, "codes": dict(sorted(codes.items())), "crash": bug, "bytes": len(text),
            **floors(text)}


def floors(text: str) -> dict:
    """CPU seconds of the floors on the same text: CPython's ``ast.parse`` (no linter can be
    cheaper) and pyflakes (a pure-Python linter: one parse and one walk), when installed. Both
    run with the cyclic collector paused, as the linter does."""
    import ast
    import io

    from pypto_ast.analysis.engine import collector_paused

    out: dict = {}
    with collector_paused():
        cpu = time.process_time()
        try:
            ast.parse(text)
            out["parse"] = time.process_time() - cpu
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            out["parse"] = None  # beyond CPython's parser: the linter reports PTO000
        try:
            from pyflakes.api import check
            from pyflakes.reporter import Reporter
        except ImportError:
            return out
        cpu = time.process_time()
        sink = io.StringIO()
        try:
            check(text, "case.py", Reporter(sink, sink))
            out["pyflakes"] = time.process_time() - cpu
        except RecursionError:
            out["pyflakes"] = None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--case", action="append", choices=sorted(FAMILIES), help="only these families")
    ap.add_argument("--no-render", action="store_true", help="time lint_text only")
    ap.add_argument("--cli", action="store_true", help="time the pypto-lint process on each case")
    ap.add_argument("--one", nargs=2, metavar=("FAMILY", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        run = run_cli(args.one[0], int(args.one[1])) if args.cli else run_one(args.one[0], int(args.one[1]),
                                                                                not args.no_render)
        print(json.dumps(run))
        return
    for family in args.case or FAMILIES:
        sizes = FAMILIES[family][1]
        times: list = []
        for n in sizes:
            cmd = [sys.executable, __file__, "--one", family, str(n)] + (["--no-render"] if args.no_render else []) \
                + (["--cli"] if args.cli else [])
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                                      env={**os.environ, "PYTHONPATH": str(ROOT)})
            except subprocess.TimeoutExpired:
                times.append(None)
                print(f"{family:12s} n={n:<9d} >{args.timeout:.0f} s (timed out)", flush=True)
                continue
            if proc.returncode != 0:
                times.append(None)
                tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
                print(f"{family:12s} n={n:<9d} CRASHED (exit {proc.returncode}): {tail[0][:200]}", flush=True)
                continue
            out = json.loads(proc.stdout.strip().splitlines()[-1])
            times.append(out["seconds"])
            codes = " ".join(f"{c}x{k}" for c, k in out["codes"].items()) or "-"
            crash = "  CRASH(PTO999)" if out["crash"] else ""
            floor = "".join(f"  {name} {out[name]:.3f} s ({out['seconds'] / out[name]:.1f}x)"
                            for name in ("parse", "pyflakes") if out.get(name))
            print(f"{family:12s} n={n:<9d} {out['seconds']:8.3f} s CPU ({out['wall']:7.3f} wall)  {out['bytes']:>9d} B  "
                  f"{codes}{crash}{floor}", flush=True)
        for (n0, t0), (n1, t1) in zip(zip(sizes, times), list(zip(sizes, times))[1:]):
            if t0 and t1 and family not in ("huge_unroll",):
                print(f"{'':12s} t({n1})/t({n0}) = {t1 / t0:5.2f}  (size ratio {n1 / n0:.2f})", flush=True)


if __name__ == "__main__":
    main()
