#!/usr/bin/env python3
"""The static front end's speed, against the official pypto and against the tracer it replaced.

    python bench/frontend_speed.py [--before DIR] [--repeat 5] [--examples a b ...] [--no-pypto]

1. whole process  ``pypto-transpile FILE --emit ir`` (python start, imports, read, lower, print)
                  against pypto 0.2.0 as a whole process on the same example (python start,
                  ``import pypto``, the module's import, the first ``RunMode.SIM`` call), each in a
                  fresh process; medians of --repeat.
2. in process     source -> IR text in this process: ``pipeline.lower_file`` + ``emit("ir")``,
                  against the tracer of an older checkout (``--before DIR``, e.g. a ``git archive``
                  of 0ea331f: ``load_module`` + ``find_kernel`` + ``lower`` with ``example_inputs()``),
                  measured in a subprocess on that tree; medians of --repeat after one warm-up.
3. unrolled cond  a symbolic ``if`` in a ``pypto.loop(..., unroll_list=[k])`` body for k in 4, 8,
                  12, 16, 32: lowering time and IR text size (ours; the older tracer for k <= --before-max,
                  it enumerates 2**k paths).

The official pypto runs one kernel per subprocess in a temporary directory (it writes output/ into
the working directory); it is skipped when not importable.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DEFAULT_EXAMPLES = ("clean_row_softmax", "clean_elementwise_chain", "clean_matmul_bias_relu", "clean_rms_norm",
                    "clean_loop_unroll_blocks", "clean_varlen_valid_shape")


def wall(cmd, *, cwd=None, env=None, repeat=3) -> tuple:
    """(median seconds, last return code) of a whole command."""
    times, code = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        code = proc.returncode
    return statistics.median(times), code


# -- 1. whole process -------------------------------------------------------------------------
def whole_process(names, repeat: int, with_pypto: bool) -> list:
    rows = []
    for name in names:
        path = EXAMPLES / f"{name}.py"
        ours, code = wall([sys.executable, "-m", "pypto_ast.cli.transpile", str(path), "--emit", "ir"], repeat=repeat)
        if code != 0:
            rows.append((name, None, None, f"exit {code}"))
            continue
        theirs = None
        note = ""
        if with_pypto:
            work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
            (work / "home").mkdir()
            env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
            env["HOME"] = str(work / "home")
            try:
                theirs, code = wall([sys.executable, str(ROOT / "bench" / "transpile_latency.py"), "--pypto-child",
                                     str(path), "--calls", "1"], cwd=work, env=env, repeat=repeat)
                if code != 0:
                    theirs, note = None, f"pypto exit {code}"
            finally:
                shutil.rmtree(work, ignore_errors=True)
        rows.append((name, ours, theirs, note))
    return rows


def pypto_available() -> bool:
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
    probe = subprocess.run([sys.executable, "-c", "import pypto"], capture_output=True, env=env,
                           cwd=tempfile.gettempdir())
    return probe.returncode == 0


# -- 2. in process ----------------------------------------------------------------------------
def ours_in_process(path: Path, repeat: int) -> float:
    from pypto_ast import pipeline

    pipeline.emit(pipeline.lower_file(str(path)), "ir")  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        pipeline.emit(pipeline.lower_file(str(path)), "ir")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


BEFORE_SCRIPT = """
import contextlib, io, json, statistics, sys, time
from pypto_ast import pipeline
path, repeat = sys.argv[1], int(sys.argv[2])
find = getattr(pipeline, "find_kernel")
def once():
    with contextlib.redirect_stdout(io.StringIO()):
        module = pipeline.load_module(path)
        inputs = module.example_inputs() if hasattr(module, "example_inputs") else {}
        return pipeline.emit(pipeline.lower(find(module), inputs), "ir")
try:
    text = once()
    times = []
    for _ in range(repeat):
        start = time.perf_counter(); once(); times.append(time.perf_counter() - start)
    print(json.dumps({"seconds": statistics.median(times), "chars": len(text)}))
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:160]}))
"""


def before_run(before: Path, path: Path, repeat: int, timeout: float = 600) -> dict:
    env = dict(os.environ, PYTHONPATH=str(before))
    try:
        proc = subprocess.run([sys.executable, "-c", BEFORE_SCRIPT, str(path), str(repeat)], env=env,
                              capture_output=True, text=True, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            return json.loads(line)
    return {"error": f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:] }"}


# -- 3. a cond in an unrolled loop ------------------------------------------------------------
def unrolled_cond_source(k: int) -> str:
    return textwrap.dedent(f'''
        import pypto
        import torch

        @pypto.frontend.jit
        def cond_unroll(x: pypto.Tensor((64, 64), pypto.DT_FP32), lens: pypto.Tensor((64,), pypto.DT_INT32),
                        out: pypto.Tensor((64, 64), pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 64)
            for i in pypto.loop(64, name="rows", idx_name="i", unroll_list=[{k}]):
                row = pypto.view(x, [1, 64], [i, 0])
                if lens[i] > 3:
                    pypto.assemble(row * 2.0, [i, 0], out)
                else:
                    pypto.assemble(row + 1.0, [i, 0], out)


        def example_inputs():
            return {{"x": torch.randn(64, 64), "lens": torch.randint(0, 8, (64,), dtype=torch.int32),
                    "out": torch.zeros(64, 64)}}
    ''')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, help="an older checkout (the tracer) to compare in-process lowering with")
    ap.add_argument("--before-max", type=int, default=8, help="largest unroll factor to give the older tracer")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--examples", nargs="+", default=list(DEFAULT_EXAMPLES))
    ap.add_argument("--no-pypto", action="store_true")
    ap.add_argument("--sections", default="123", help="which sections to run, e.g. 3")
    args = ap.parse_args()
    print(f"CPU: {_cpu()}; python {sys.version.split()[0]}")

    with_pypto = not args.no_pypto and pypto_available()
    if "1" in args.sections:
        section_whole_process(args, with_pypto)
    if "2" in args.sections:
        section_in_process(args)
    if "3" in args.sections:
        section_unrolled_cond(args)
    return 0


def section_whole_process(args, with_pypto: bool) -> None:
    print("\n1. whole process: pypto-transpile --emit ir vs pypto 0.2.0 (import + first SIM call), median s")
    print(f"{'example':30s} {'ours':>7s} {'pypto':>7s} {'ratio':>7s}")
    ratios = []
    for name, ours, theirs, note in whole_process(args.examples, args.repeat, with_pypto):
        ratio = theirs / ours if ours and theirs else None
        if ratio:
            ratios.append(ratio)
        print(f"{name:30s} {_f(ours):>7s} {_f(theirs):>7s} {(f'{ratio:.1f}x' if ratio else '-'):>7s}  {note}")
    if ratios:
        print(f"median ratio {statistics.median(ratios):.1f}x (goal >= 10x)")


def section_in_process(args) -> None:
    print("\n2. in process: source -> IR text, median ms")
    print(f"{'example':30s} {'ours':>8s} {'before':>8s} {'ratio':>7s}")
    for name in args.examples:
        path = EXAMPLES / f"{name}.py"
        ours = ours_in_process(path, args.repeat) * 1e3
        before = before_run(args.before, path, args.repeat) if args.before else {}
        b = before.get("seconds")
        b_ms = b * 1e3 if b else None
        print(f"{name:30s} {ours:8.2f} {_f(b_ms, 2):>8s} {(f'{b_ms / ours:.1f}x' if b_ms else '-'):>7s}  "
              f"{before.get('error', '')}")


def section_unrolled_cond(args) -> None:
    print("\n3. a symbolic if in pypto.loop(..., unroll_list=[k]): lowering s and IR KiB")
    print(f"{'k':>3s} {'ours s':>8s} {'ours KiB':>9s} {'paths':>7s} {'before s':>9s} {'before KiB':>11s}")
    from pypto_ast import pipeline

    tmp = Path(tempfile.mkdtemp(prefix="bench-unroll-"))
    try:
        warm = tmp / "warm_up.py"
        warm.write_text(unrolled_cond_source(2))
        pipeline.emit(pipeline.lower_file(str(warm)), "ir")  # imports and caches, not timed
        for k in (4, 8, 12, 16, 32):
            path = tmp / f"cond_unroll_{k}.py"
            path.write_text(unrolled_cond_source(k))
            start = time.perf_counter()
            program = pipeline.lower_file(str(path))
            text = pipeline.emit(program, "ir")
            ours = time.perf_counter() - start
            before = before_run(args.before, path, 1) if args.before and k <= args.before_max else {}
            b, chars = before.get("seconds"), before.get("chars")
            print(f"{k:>3d} {ours:8.3f} {len(text) / 1024:9.1f} {program.paths:>7d} {_f(b, 3):>9s} "
                  f"{(f'{chars / 1024:.1f}' if chars else '-'):>11s}  {before.get('error', '')}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _f(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
