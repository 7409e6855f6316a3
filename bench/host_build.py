"""Host-backend build and run times per example: this checkout against an earlier revision,
measured in the same run.

    python bench/host_build.py [--before REV] [--runs 3] [--repeat 9] [--no-cli] [EXAMPLE ...]

--before REV (default: 0ea331f, the last commit before the host runtime was split out of
kernel_operator.h) is extracted with ``git archive`` into a temporary directory.  Each tree is
then measured by a fresh ``python`` subprocess with only that tree on ``sys.path`` (so both
import their own ``pypto_ast``), alternating before/after --runs times; every figure is the
median over the runs, with its min-max spread.  Per example (``examples/clean_*.py`` that the
host backend runs, or the EXAMPLEs given):

  TUs        translation units of the program (kernels + control.cpp)
  cold s     build with nothing of this program in the cache (always_compile).  After: the
             host runtime's objects are already in the cache (built once per compiler, timed
             separately as "runtime once"); before: there was no runtime to prebuild.
  warm ms    the same build again: a cache hit (key + entry check)
  run ms     time inside the library's pypto_run (the control program and its kernels, one
             host thread), median of --repeat calls after one untimed call

With the CLI timings on (default), also whole processes: ``pypto-transpile FILE --build
--backend host`` cold (empty cache; after: runtime prebuilt) and warm, and ``--run --backend
host`` warm, for clean_row_softmax.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "0ea331f"
RESULT = "RESULT "

DRIVER = r'''
import contextlib, io, json, os, statistics, sys, tempfile, time
tree, repeat = sys.argv[1], int(sys.argv[2])
paths = sys.argv[3:]
sys.path.insert(0, tree)
from pypto_ast import knobs, live, pipeline
from pypto_ast.emit import build, host_backend
knobs.host_threads = 1
try:
    from pypto_ast.emit import host_runtime
except ImportError:
    host_runtime = None
cache = tempfile.mkdtemp(prefix="pypto-ast-bench-")
out = {"examples": {}}
if host_runtime is not None:
    t = time.perf_counter()
    host_runtime.runtime_objects(cache_dir=cache)
    out["runtime_s"] = time.perf_counter() - t


def do_build(srcs, always):
    if host_runtime is not None:
        return host_runtime.build_program(srcs, cache_dir=cache, always_compile=always)
    return build.build_host_library(srcs, include_dirs=[host_backend.HEADER_DIR], cache_dir=cache,
                                    always_compile=always)


run_times = []


class TimedFn:
    def __init__(self, fn):
        object.__setattr__(self, "fn", fn)

    def __setattr__(self, name, value):
        setattr(self.fn, name, value)

    def __call__(self, *args):
        t = time.perf_counter()
        rc = self.fn(*args)
        run_times.append(time.perf_counter() - t)
        return rc


class TimedLib:
    def __init__(self, lib):
        self.lib, self.run = lib, TimedFn(lib.pypto_run)

    def __getattr__(self, name):
        return self.run if name == "pypto_run" else getattr(self.lib, name)


real_load = host_backend.load_library
host_backend.load_library = lambda path: TimedLib(real_load(path))
for path in paths:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            module = live.load_module(path)
            kernel = live.find_kernel(module)
            inputs = module.example_inputs()
            program = pipeline.lower(kernel, inputs)
            files = pipeline.emit(program, "ascendc")
    except Exception as exc:  # not supported by this tree's host backend
        out["examples"][os.path.basename(path)] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        continue
    srcs = {n: t for n, t in files.items() if n.endswith(".cpp")}
    t = time.perf_counter(); do_build(srcs, True); cold = time.perf_counter() - t
    t = time.perf_counter(); do_build(srcs, False); warm = time.perf_counter() - t
    run_times.clear()
    for _ in range(repeat + 1):
        host_backend.run_host(program, inputs, files=files, cache_dir=cache)
    out["examples"][os.path.basename(path)] = {
        "tus": len(srcs), "cold_s": cold, "warm_ms": warm * 1e3,
        "run_ms": statistics.median(run_times[1:]) * 1e3}
print("RESULT " + json.dumps(out))
'''


def extract(rev: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def drive(tree: Path, examples: list[Path], repeat: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(tree), str(repeat), *map(str, examples)],
                          capture_output=True, text=True, env=env, cwd=str(tree))
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    raise SystemExit(f"driver failed in {tree}:\n{proc.stderr[-3000:]}")


def whole_process(tree: Path, args: list[str], cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYPTO_AST_CACHE_DIR": str(cache)}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, str(tree / "cli" / "transpile.py"), *args], capture_output=True,
                          text=True, env=env, cwd=str(tree))
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {tree}:\n{proc.stderr[-2000:]}")
    return elapsed


def cli_times(tree: Path) -> dict:
    """Whole-process seconds for the row softmax: cold --build, warm --build, warm --run."""
    example = "examples/clean_row_softmax.py"
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        if (tree / "pypto_ast" / "emit" / "host_runtime.py").exists():  # runtime once, not timed
            whole_process(tree, [example, "--build", "--backend", "host", "-q"], cache)
            for entry in (cache / "v2").iterdir():
                if not entry.name.startswith("obj-"):
                    subprocess.run(["rm", "-rf", str(entry)], check=True)
        cold = whole_process(tree, [example, "--build", "--backend", "host"], cache)
        warm = whole_process(tree, [example, "--build", "--backend", "host"], cache)
        run = whole_process(tree, [example, "--run", "--backend", "host"], cache)
    return {"cli_cold_s": cold, "cli_warm_s": warm, "cli_run_s": run}


def spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default=BEFORE, help="revision to compare with (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="alternating before/after measurements")
    ap.add_argument("--repeat", type=int, default=9, help="pypto_run calls per example and run")
    ap.add_argument("--no-cli", action="store_true", help="skip the whole-process CLI timings")
    ap.add_argument("examples", nargs="*", type=Path)
    args = ap.parse_args()
    examples = [p.resolve() for p in args.examples] or sorted((ROOT / "examples").glob("clean_*.py"))

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")
    print(f"{cpu}, {os.cpu_count()} cores; before = {args.before}, after = this checkout; "
          f"{args.runs} alternating runs")
    with tempfile.TemporaryDirectory() as tmp:
        before = extract(args.before, Path(tmp))
        trees = {"before": before, "after": ROOT}
        results: dict = {"before": [], "after": []}
        for _ in range(args.runs):
            for name, tree in trees.items():
                res = drive(tree, examples, args.repeat)
                if not args.no_cli:
                    res.update(cli_times(tree))
                results[name].append(res)

    runtime = [r["runtime_s"] for r in results["after"] if "runtime_s" in r]
    if runtime:
        print(f"after: the host runtime, built once per compiler and header version: {spread(runtime, '.1f')} s")
    names = [p.name for p in examples]
    width = max(len(n) for n in names)
    print(f"{'example':<{width}}  {'TUs':>3}  {'cold s before':>16}  {'cold s after':>16}  {'speed-up':>8}  "
          f"{'warm ms before':>16}  {'warm ms after':>16}  {'run ms before':>18}  {'run ms after':>18}  {'run after/before':>8}")
    for n in names:
        b = [r["examples"][n] for r in results["before"]]
        a = [r["examples"][n] for r in results["after"]]
        if any("error" in x for x in a + b):
            why = next(x["error"] for x in a + b if "error" in x)
            print(f"{n:<{width}}  not run on the host backend ({why})")
            continue
        ratio = statistics.median(x["cold_s"] for x in b) / statistics.median(x["cold_s"] for x in a)
        run_ratio = statistics.median(x["run_ms"] for x in a) / statistics.median(x["run_ms"] for x in b)
        print(f"{n:<{width}}  {a[0]['tus']:>3}  {spread([x['cold_s'] for x in b], '.2f'):>16}  "
              f"{spread([x['cold_s'] for x in a], '.2f'):>16}  {ratio:7.1f}x  "
              f"{spread([x['warm_ms'] for x in b], '.1f'):>16}  {spread([x['warm_ms'] for x in a], '.1f'):>16}  "
              f"{spread([x['run_ms'] for x in b], '.3f'):>18}  {spread([x['run_ms'] for x in a], '.3f'):>18}  "
              f"{run_ratio:7.2f}")
    if not args.no_cli:
        print("whole process, clean_row_softmax.py:")
        for key, label in (("cli_cold_s", "--build, cold"), ("cli_warm_s", "--build, warm"),
                           ("cli_run_s", "--run --backend host, warm")):
            print(f"  {label:<28} before {spread([r[key] for r in results['before']], '.2f')} s   "
                  f"after {spread([r[key] for r in results['after']], '.2f')} s")


if __name__ == "__main__":
    main()
