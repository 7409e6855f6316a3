#!/usr/bin/env python3
"""pypto-lint over a real corpus, against an older pypto-ast and a floor, in the same run.

    python bench/lint_speed.py PATH --before DIR [--dirs examples models python/tests] [--repeat 3]

PATH is a checkout of https://github.com/hicann/pypto (fetched by you; no test reads it).  DIR is
an older source tree of pypto-ast, e.g. the one issue 10 measured ("today" when it was filed):

    mkdir /tmp/before && git archive 0ea331f | tar x -C /tmp/before

Each tree's own ``pypto-lint`` runs as one process over the chosen directories, exactly as a user
types it (``pypto-lint examples models python/tests``, its default worker pool, JSON output), and
is timed in wall and CPU seconds (the process and its pool workers).  The floor is pyflakes (a
pure-Python linter: one ``ast.parse`` and one walk per file) over the same files in one process,
when it is installed.  Medians over ``--repeat`` runs, interleaved so load drifts hit both trees.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = ("examples", "models", "python/tests")

# Runs a tree's pypto-lint without installing it: the tree goes first on sys.path, and its
# ``cli/`` folder is the ``pypto_ast.cli`` package (pyproject's package-dir mapping).
LAUNCH = r"""
import sys, types
tree = sys.argv.pop(1)
sys.path.insert(0, tree)
import pypto_ast
assert pypto_ast.__file__.startswith(tree), pypto_ast.__file__
cli = types.ModuleType("pypto_ast.cli")
cli.__path__ = [tree + "/cli"]
cli.__package__ = "pypto_ast.cli"
sys.modules["pypto_ast.cli"] = cli
exec(compile(open(tree + "/cli/__init__.py").read(), tree + "/cli/__init__.py", "exec"), cli.__dict__)
from pypto_ast.cli.lint import main
sys.argv[0] = "pypto-lint"
main()
"""

PYFLAKES = r"""
import io, sys
from pyflakes.api import checkPath
from pyflakes.reporter import Reporter
out = io.StringIO()
for path in sys.argv[1:]:
    checkPath(path, Reporter(out, out))
"""


def run(cmd: list, cwd: Path) -> tuple:
    """(wall s, CPU s of the process and its children, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])} ... exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def codes_of(stdout: str) -> collections.Counter:
    try:
        found = json.loads(stdout or "[]")
    except json.JSONDecodeError:
        return collections.Counter({"(unreadable output)": 1})
    return collections.Counter(d.get("code", "?") for d in found)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", type=Path, help="a checkout of the official pypto repository")
    ap.add_argument("--before", type=Path, required=True, help="an older pypto-ast source tree")
    ap.add_argument("--dirs", nargs="+", default=list(DEFAULT_DIRS))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not (args.path / "python").is_dir():
        print(f"{args.path}: not a pypto checkout (no python/ folder)", file=sys.stderr)
        return 2
    trees = {"this checkout": ROOT.resolve(), f"before ({args.before})": args.before.resolve()}
    for tree in trees.values():
        if not (tree / "cli" / "lint.py").is_file():
            print(f"{tree}: not a pypto-ast source tree (no cli/lint.py)", file=sys.stderr)
            return 2
    files = sorted(str(p.relative_to(args.path)) for d in args.dirs for p in (args.path / d).rglob("*.py"))
    floor = importlib.util.find_spec("pyflakes") is not None
    times: dict = collections.defaultdict(list)
    codes: dict = {}
    for _ in range(args.repeat):
        for name, tree in trees.items():
            wall, cpu, out = run([sys.executable, "-c", LAUNCH, str(tree), "--output-format", "json", "-q",
                                  *args.dirs], args.path)
            times[name].append((wall, cpu))
            codes[name] = codes_of(out)
        if floor:
            times["pyflakes (floor)"].append(run([sys.executable, "-c", PYFLAKES, *files], args.path)[:2])
    lines = sum((args.path / f).read_text(errors="replace").count("\n") for f in files)
    print(f"corpus: {args.path} ({', '.join(args.dirs)}): {len(files)} files, {lines} lines; "
          f"median of {args.repeat}; {os.cpu_count()} CPUs")
    print(f"{'run':<40} {'wall s':>8} {'CPU s':>8}  findings")
    med = {name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for name, t in times.items()}
    for name, (wall, cpu) in med.items():
        found = codes.get(name)
        summary = (f"{sum(found.values())} (" + ", ".join(f"{c} {n}" for c, n in sorted(found.items())) + ")") \
            if found is not None else "-"
        print(f"{name:<40} {wall:>8.2f} {cpu:>8.2f}  {summary}")
    now, then = med["this checkout"], med[f"before ({args.before})"]
    print(f"speed-up over the older tree: {then[0] / now[0]:.2f}x wall, {then[1] / now[1]:.2f}x CPU")
    if floor:
        flake = med["pyflakes (floor)"]
        print(f"this checkout vs the pyflakes floor: {now[1] / flake[1]:.2f}x its CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
