#!/usr/bin/env python3
"""How much real PyPTO code the static front end transpiles: every kernel of a checkout of the
official repository, read from source (never run), with no flags.

    python bench/real_corpus.py PATH [--dirs examples models python/tests] [--json OUT] [-v]

PATH is a checkout of https://github.com/hicann/pypto (fetched by you; nothing here needs it and
no test reads it).  For each ``.py`` file under the chosen directories, every kernel
``pypto-transpile FILE --list`` shows (module-level and nested jit kernels, legacy
``with pypto.function(...)`` bodies; ``frontend.function`` helpers are inlined, not counted) is
lowered as ``pypto-transpile FILE --kernel NAME --emit ir`` would, and sorted into:

* ``lowered``      an IR program came out;
* ``needs-shape``  PTO104: a shape is bound at the call and nothing in the file gives it (the
                   user adds ``--shape``);
* ``diagnostic``   another located diagnostic with a stable code (PTO000..PTO108);
* ``crash``        anything else: a Python exception out of pypto-ast (our bug) or a kernel
                   that took longer than ``--timeout`` seconds.

Goals (issue 9): no crash; lowered >= 50 % of all kernels; lowered + needs-shape >= 90 %.

Every kernel that lowered is then emitted as Ascend C (``--emit ascendc``) and, unless
``--no-build``, built on the host (``--build --backend host``: g++ against the project's CPU
implementation of the API, through the build cache), each with the first reason it stopped at.
Goal (issue 17): at least 95 % of the kernels that lower emit Ascend C and build on the host.

Then the linter on the same files (``--no-lint`` skips it): files, lines, findings per code,
internal errors (PTO999), the files ``--fix`` would change (safe fixes, each proven by lowering
the file before and after), and the lint time per file.  Goals (issue 10): no PTO999, no
finding of the false-alarm classes listed there (every remaining finding is printed with -v).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DIRS = ("examples", "models", "python/tests")


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def files_of(base: Path, dirs) -> list:
    out = []
    for d in dirs:
        out += sorted(p for p in (base / d).rglob("*.py") if p.is_file())
    return out


def classify(path: Path, timeout: float, build: bool = True) -> list:
    """[(kernel name, kind, line, outcome, code, message, seconds, emitted, built)] for one file:
    ``emitted`` / ``built`` are None (not reached), "" (done) or the first reason it stopped."""
    from pypto_ast import pipeline
    from pypto_ast.frontend.kernels import Given

    rows = []
    start = time.perf_counter()
    try:
        scope = pipeline.read_source(str(path))
        kernels = [k for k in pipeline.list_kernels(scope) if k.kind != "function"]
    except pipeline.KernelErrors as exc:
        return [("<file>", "file", 1, "diagnostic", exc.code, exc.message, time.perf_counter() - start, None, None)]
    except Exception as exc:  # noqa: BLE001 - reading the file crashed: our bug
        return [("<file>", "file", 1, "crash", type(exc).__name__, _where(exc), time.perf_counter() - start,
                 None, None)]
    for kdef in kernels:
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        program = None
        try:
            program = pipeline.lower_kernel(scope, kdef, Given())
            outcome, code, message = "lowered", "", ""
        except pipeline.KernelErrors as exc:
            outcome = "needs-shape" if exc.code == "PTO104" else "diagnostic"
            code, message = exc.code, exc.message
        except Timeout:
            outcome, code, message = "crash", "timeout", f"took more than {timeout:g} s"
        except Exception as exc:  # noqa: BLE001
            outcome, code, message = "crash", type(exc).__name__, _where(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.perf_counter() - t0
        emitted = built = None
        if program is not None:
            emitted = _stage(lambda: pipeline.emit(program, "ascendc"))
            if emitted == "" and build:
                built = _stage(lambda: pipeline.build_host(program))
        rows.append((kdef.name, kdef.kind, kdef.line, outcome, code, message, seconds, emitted, built))
    return rows


def _stage(run) -> str:
    """"" when ``run()`` succeeds, else its first reason: "PTO109 message" for a located
    diagnostic, "crash: ..." for a Python exception out of pypto-ast."""
    from pypto_ast import pipeline

    try:
        run()
        return ""
    except pipeline.KernelErrors as exc:
        return f"{exc.code} {exc.findings[0][0] if exc.findings else exc.message}"
    except pipeline.PipelineError as exc:
        return f"error {exc.message}"
    except Exception as exc:  # noqa: BLE001 - our bug
        return f"crash: {type(exc).__name__}: {_where(exc)}"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    inner = frames[-1] if frames else None
    where = f" at {Path(inner.filename).name}:{inner.lineno}" if inner else ""
    return f"{exc}{where}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", type=Path, help="a checkout of the official pypto repository")
    ap.add_argument("--dirs", nargs="+", default=list(DEFAULT_DIRS))
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds one kernel may take")
    ap.add_argument("--json", type=Path, help="write every kernel's outcome here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every kernel that did not lower "
                    "and every lint finding")
    ap.add_argument("--no-lint", action="store_true", help="skip the linter section")
    ap.add_argument("--no-build", action="store_true", help="emit Ascend C but do not build it on the host")
    ap.add_argument("--target", default="0.2.0", help="the pypto version lint rules follow (0.2.0 or head)")
    args = ap.parse_args()
    if not (args.path / "python").is_dir():
        print(f"{args.path}: not a pypto checkout (no python/ folder)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGALRM, _alarm)
    files = files_of(args.path, args.dirs)
    started = time.perf_counter()
    results = []
    for path in files:
        rel = path.relative_to(args.path).as_posix()
        for row in classify(path, args.timeout, build=not args.no_build):
            results.append((rel,) + row)
    wall = time.perf_counter() - started
    kernels = [r for r in results if r[2] != "file"]
    by_outcome = collections.Counter(r[4] for r in results)
    by_kind = collections.defaultdict(collections.Counter)
    for r in kernels:
        by_kind["legacy" if r[2] == "legacy" else "jit"][r[4]] += 1
    total = len(kernels)
    lowered = sum(1 for r in kernels if r[4] == "lowered")
    shaped = sum(1 for r in kernels if r[4] == "needs-shape")
    crashes = [r for r in results if r[4] == "crash"]
    print(f"corpus: {args.path} ({', '.join(args.dirs)}): {len(files)} files, {total} kernels "
          f"({sum(by_kind['jit'].values())} jit, {sum(by_kind['legacy'].values())} legacy); {wall:.1f} s in all")
    print(f"{'outcome':<12} {'all':>6} {'%':>6} {'jit':>6} {'legacy':>7}")
    for outcome in ("lowered", "needs-shape", "diagnostic", "crash"):
        n = sum(1 for r in kernels if r[4] == outcome)
        print(f"{outcome:<12} {n:>6} {100 * n / max(total, 1):>5.1f}% {by_kind['jit'][outcome]:>6} "
              f"{by_kind['legacy'][outcome]:>7}")
    files_failed = [r for r in results if r[2] == "file"]
    if files_failed:
        print(f"files that did not read: {len(files_failed)} "
              f"({collections.Counter(r[5] for r in files_failed).most_common()})")
    codes = collections.Counter(r[5] for r in kernels if r[4] == "diagnostic")
    print("diagnostics by code:", ", ".join(f"{c} {n}" for c, n in codes.most_common()) or "none")
    messages = collections.Counter(_shape_of(r[6]) for r in kernels if r[4] in ("diagnostic", "crash"))
    print("most frequent reasons:")
    for message, n in messages.most_common(12):
        print(f"  {n:>4}  {message}")
    slow = sorted(kernels, key=lambda r: -r[7])[:3]
    print("slowest kernels:", "; ".join(f"{r[0]}::{r[1]} {r[7]:.2f} s" for r in slow))
    if args.verbose:
        for r in results:
            if r[4] != "lowered":
                print(f"{r[0]}:{r[3]} {r[1]} [{r[4]} {r[5]}] {r[6]}")
    ok_lower = lowered >= 0.5 * total
    ok_shape = lowered + shaped >= 0.9 * total
    print(f"goals: no crash {'met' if not crashes else 'MISSED'} ({len(crashes)}); lowered >= 50% "
          f"{'met' if ok_lower else 'MISSED'} ({100 * lowered / max(total, 1):.1f}%); lowered + needs-shape >= 90% "
          f"{'met' if ok_shape else 'MISSED'} ({100 * (lowered + shaped) / max(total, 1):.1f}%)")
    ok_emit = emit_section(kernels, lowered, not args.no_build, args.verbose)
    if args.json:
        keys = ("file", "kernel", "kind", "line", "outcome", "code", "message", "seconds", "emitted", "built")
        args.json.write_text(json.dumps([dict(zip(keys, r)) for r in results], indent=1))
    del by_outcome
    lint_ok = True if args.no_lint else lint_section(args, files)
    return 0 if not crashes and ok_lower and ok_shape and ok_emit and lint_ok else 1


def emit_section(kernels: list, lowered: int, build: bool, verbose: bool) -> bool:
    """Of the kernels that lowered: how many emit Ascend C and build on the host, and why the
    others stopped (the first reason of each)."""
    emitted = [r for r in kernels if r[8] == ""]
    built = [r for r in emitted if r[9] == ""]
    stops = [(r, "emit", r[8]) for r in kernels if r[8]] + [(r, "build", r[9]) for r in emitted if r[9]]
    done = len(built) if build else len(emitted)
    print(f"\nof the {lowered} kernels that lowered: emitted Ascend C {len(emitted)} "
          f"({100 * len(emitted) / max(lowered, 1):.1f}%)" +
          (f", built on the host {len(built)} ({100 * len(built) / max(lowered, 1):.1f}%)" if build else ""))
    reasons = collections.Counter(f"{stage}: {_shape_of(reason, keep_quoted=True)}" for _, stage, reason in stops)
    print("first reasons they stopped:")
    for reason, n in reasons.most_common(25):
        print(f"  {n:>4}  {reason}")
    crashes = [s for s in stops if s[2].startswith("crash")]
    if verbose:
        for r, stage, reason in stops:
            print(f"{r[0]}:{r[3]} {r[1]} [{stage}] {reason}")
    ok = done >= 0.95 * lowered and not crashes
    print(f"goals: emitted{' and built' if build else ''} >= 95% of lowered {'met' if ok else 'MISSED'} "
          f"({100 * done / max(lowered, 1):.1f}%), no crash {'met' if not crashes else 'MISSED'} ({len(crashes)})")
    return ok


def lint_section(args, files) -> bool:
    """pypto-lint over the same files, in this process (one file at a time)."""
    from pypto_ast.analysis.engine import lint_text
    from pypto_ast.settings import Settings
    from pypto_ast.transforms.fixer import fix_text

    settings = Settings(target=args.target)
    by_code: collections.Counter = collections.Counter()
    findings, bugs, fixed_files, lines, times = [], [], [], 0, []
    started = time.perf_counter()
    for path in files:
        rel = path.relative_to(args.path).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        lines += text.count("\n") + 1
        t0 = time.perf_counter()
        result = lint_text(text, rel, settings)
        times.append((time.perf_counter() - t0, rel))
        for d in result.diagnostics:
            (bugs if d.code == "PTO999" else findings).append((rel, d))
            by_code[d.code] += 1
        if any(d.fix_applies(False) for d in result.diagnostics):
            outcome = fix_text(text, rel, settings)
            if outcome.text != text:
                fixed_files.append((rel, outcome.applied))
    wall = time.perf_counter() - started
    times.sort(reverse=True)
    print(f"\nlint (--target {args.target}): {len(files)} files, {lines} lines, {len(findings)} findings, "
          f"{len(bugs)} internal errors (PTO999); {wall:.1f} s (fix proofs included)")
    print("findings by code:", ", ".join(f"{c} {n}" for c, n in sorted(by_code.items())) or "none")
    print(f"--fix would change {len(fixed_files)} files" +
          (": " + ", ".join(f"{f} ({n})" for f, n in fixed_files) if fixed_files else ""))
    print("slowest files:", "; ".join(f"{rel} {t:.2f} s" for t, rel in times[:3]))
    if args.verbose or bugs:
        for rel, d in findings + bugs:
            print(f"  {rel}:{d.span.start.line}:{d.span.start.col + 1}: {d.code} {d.message[:150]}")
    print(f"goals: no PTO999 {'met' if not bugs else 'MISSED'} ({len(bugs)})")
    return not bugs


def _shape_of(message: str, keep_quoted: bool = False) -> str:
    """A message with its names and numbers blurred, so like reasons count together
    (``keep_quoted``: 'op' names stay, the emitter's reasons are counted per op)."""
    import re

    text = re.sub(r"`[^`]*`", "`_`", message)
    text = re.sub(r"@\w+", "@_", text)
    if not keep_quoted:
        text = re.sub(r"'[^']*'", "'_'", text)
    text = re.sub(r"\d+", "N", text)
    return text[:140]


if __name__ == "__main__":
    os.environ.setdefault("PYPTO_AST_QUIET", "1")
    raise SystemExit(main())
