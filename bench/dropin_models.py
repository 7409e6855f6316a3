#!/usr/bin/env python3
"""The official PyPTO models' tests under the pypto-ast drop-in: do they pass their own checks?

    python bench/dropin_models.py PATH [--backend interp|host|interp,host] [--run-skipped-large]
                                       [--timeout 1800] [-k SUBSTRING] [--json OUT]

PATH is a checkout of https://github.com/hicann/pypto (fetched by you; nothing in this project
copies its code and no test reads it).  The models' tests compare every output with a torch
golden unconditionally, so a pass means the numbers are right.  They run as a user runs them:

* every ``PATH/models/**/test_*.py`` under ``pytest -p pypto_ast.pytest_plugin --pypto-backend B``,
  one pytest process per file and backend, in the file's directory (the models import their
  ``*_impl.py`` siblings), ``--pypto-run-skipped-large`` passed on with ``--run-skipped-large``;
  this script is also loaded as a pytest plugin there (``-p dropin_models``) and records each
  test's outcome, first reason and time into a JSON file;
* a file with no pytest test that runs from ``main()`` (Arctic's ``test_sum_lstm.py``) runs as
  ``python -m pypto_ast.dropin --backend B FILE``: it passes when it exits 0.

Each test is classified ``passed``, ``failed`` (an ``AssertionError``: its own checks),
``unsupported`` (``pypto_ast.dropin.Unsupported`` / ``KernelError``: the located diagnostic),
``skipped`` (by its own mark, with the reason), ``crash`` (any other exception, a collection
error, a timeout or a dead process).  A table per test and backend, with times, and the totals.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ("passed", "failed", "unsupported", "skipped", "crash")
REPORT_ENV = "PYPTO_AST_MODELS_REPORT"


# =============================================================================================
# the pytest side: loaded in each pytest process with `-p dropin_models`
# =============================================================================================
def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _reason(report) -> tuple:
    """(outcome, first reason) of a failed phase, from the exception pytest kept."""
    info = getattr(report, "longrepr", None)
    crash = getattr(getattr(info, "reprcrash", None), "message", None)
    text = crash or str(info or "")
    first = text.strip().splitlines()[0] if text.strip() else ""
    if "(): argument `" in first:  # the jit's located check of an argument: a clean refusal, not a crash
        return "unsupported", _one_line(text)
    for name in ("Unsupported", "KernelError", "DropinError"):
        if f"pypto_ast.dropin.{name}" in text or first.startswith(f"{name}:") or f"dropin.{name}:" in text:
            return "unsupported", _one_line(text)
    if first.startswith("AssertionError") or "AssertionError" in first or "Mismatched elements" in text:
        for title, section in getattr(report, "sections", ()):
            if title == "pypto-ast" and ("[PTO113]" in section or "[PTO114]" in section):
                # one rounding step per mismatch, or a cast that met rounding ties: located
                return "failed", _one_line(section, 400)
        return "failed", _one_line(text)
    return "crash", _one_line(text)


def _record(entry: dict) -> None:
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def pytest_runtest_logreport(report):
    if not os.environ.get(REPORT_ENV):
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if report.skipped:
            longrepr = report.longrepr
            why = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
            outcome, reason = "skipped", _one_line(why.removeprefix("Skipped: "))
        elif report.passed:
            outcome, reason = "passed", ""
        else:
            outcome, reason = _reason(report)
        _record({"test": report.nodeid.split("::", 1)[-1], "outcome": outcome, "reason": reason,
                 "seconds": round(report.duration, 1)})


def pytest_collectreport(report):
    if os.environ.get(REPORT_ENV) and report.failed:
        _record({"test": "(collection)", "outcome": "crash",
                 "reason": _one_line(str(report.longrepr).strip().splitlines()[-1]), "seconds": 0.0})


# =============================================================================================
# the driver
# =============================================================================================
def model_test_files(base: Path) -> list:
    root = base / "models"
    if not root.is_dir():
        raise SystemExit(f"{root}: no such directory (PATH is a checkout of hicann/pypto)")
    return sorted(root.rglob("test_*.py"))


def has_pytest_tests(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return any(isinstance(node, ast.FunctionDef) and node.name.startswith("test_") for node in tree.body)


def _env(report: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "bench"), str(ROOT),
                                                                     os.environ.get("PYTHONPATH", "")])))
    env[REPORT_ENV] = report
    env.setdefault("TILE_FWK_DEVICE_ID", "0")  # the models read it as the official instructions set it
    env.pop("PYPTO_AST_BACKEND", None)
    return env


def run_pytest_file(path: Path, backend: str, large: bool, timeout: float) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.jsonl")
        command = [sys.executable, "-m", "pytest", "-p", "pypto_ast.pytest_plugin", "-p", "dropin_models",
                   "--pypto-backend", backend, "-p", "no:cacheprovider", "-q", "--rootdir", str(path.parent),
                   str(path)] + (["--pypto-run-skipped-large"] if large else [])
        start = time.monotonic()
        try:
            done = subprocess.run(command, cwd=path.parent, env=_env(report), capture_output=True, text=True,
                                  timeout=timeout)
            tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or [""]
        except subprocess.TimeoutExpired:
            done, tail = None, [f"timed out after {timeout:.0f} s"]
        entries = []
        if os.path.exists(report):
            with open(report, encoding="utf-8") as lines:
                entries = [json.loads(line) for line in lines if line.strip()]
        if done is None or not entries:
            entries.append({"test": "(file)", "outcome": "crash", "reason": _one_line(tail[0]),
                            "seconds": round(time.monotonic() - start, 1)})
        return entries


def run_main_file(path: Path, backend: str, timeout: float) -> list:
    command = [sys.executable, "-m", "pypto_ast.dropin", "--backend", backend, str(path)]
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=path.parent, env=_env(""), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [{"test": "main()", "outcome": "crash", "reason": f"timed out after {timeout:.0f} s",
                 "seconds": round(time.monotonic() - start, 1)}]
    seconds = round(time.monotonic() - start, 1)
    if done.returncode == 0:
        return [{"test": "main()", "outcome": "passed", "reason": "", "seconds": seconds}]
    lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
    last = lines[-1]
    outcome = ("unsupported" if any(name in last for name in ("Unsupported", "KernelError"))
               else "failed" if last.startswith("AssertionError") else "crash")
    return [{"test": "main()", "outcome": outcome, "reason": _one_line(last), "seconds": seconds}]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a checkout of hicann/pypto")
    parser.add_argument("--backend", default="interp", help="interp, host or both (comma-separated)")
    parser.add_argument("--run-skipped-large", action="store_true",
                        help="also run the tests the models skip for their size (the plugin's flag)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per file (default 1800)")
    parser.add_argument("-k", dest="select", default="", help="only files whose path contains this")
    parser.add_argument("--json", dest="json_out", help="write every result here")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    for backend in backends:
        if backend not in ("interp", "host"):
            parser.error(f"--backend: {backend!r} is not interp or host")
    files = [p for p in model_test_files(args.path) if args.select in str(p.relative_to(args.path))]
    results = []
    started = time.monotonic()
    for path in files:
        rel = str(path.relative_to(args.path))
        for backend in backends:
            entries = (run_pytest_file(path, backend, args.run_skipped_large, args.timeout) if has_pytest_tests(path)
                       else run_main_file(path, backend, args.timeout))
            for entry in entries:
                entry.update(file=rel, backend=backend)
                results.append(entry)
                print(f"{backend:6} {entry['outcome']:11} {entry['seconds']:7.1f} s  {rel}::{entry['test']}"
                      + (f"  {entry['reason']}" if entry["reason"] else ""), flush=True)
    print()
    for backend in backends:
        mine = [r for r in results if r["backend"] == backend]
        counts = {o: sum(r["outcome"] == o for r in mine) for o in OUTCOMES}
        ran = len(mine) - counts["skipped"]
        print(f"{backend}: " + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES)
              + f"; {counts['passed']}/{ran} of those not skipped passed; "
              + f"{sum(r['seconds'] for r in mine):.0f} s in tests")
    print(f"wall time {time.monotonic() - started:.0f} s; CPU: {_cpu_name()}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f", {os.cpu_count()} cores"
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
