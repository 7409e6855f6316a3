"""Transpile latency: source file to printed IR, per example, against pypto's own SIM compile;
and the Ascend C emitter's latency on the same Program.

    python bench/transpile_latency.py [--repeat 20] [--calls 3] [--no-pypto] [EXAMPLE ...]

ours   In this process: ``pipeline.lower_file(path) + emit("ir")`` on the example file (read
       from source, never run: the shapes come from the annotations or the module's own
       calls), one warm-up, then the median of --repeat runs.
emit ascendc
       In the same run: ``pipeline.emit(program, "ascendc")`` (all kernel files, control.cpp,
       manifest.json and the UB-budget check; no C++ compile) on the example's lowered
       Program, one warm-up, then the median of --repeat runs; "-" where the emitter rejects
       the kernel (EmitError / KernelErrors: not supported by the host backend yet).
pypto  When the official ``pypto`` (0.2.0) is importable: one fresh subprocess per kernel
       in its own temp dir (SIM writes ``output/`` and logs under ``$HOME``), the kernel
       re-decorated with ``run_mode=SIM`` and called with positional tensors the way
       ``scripts/check_examples_pypto.py`` does it; only the kernel call is timed, median of
       --calls calls. SIM re-traces and re-compiles on every call; the time includes its
       cost-model simulation, which cannot be switched off without changing what compiles.

Prints a table (kernel, ours ms, emit ascendc ms, pypto ms, ratio = pypto / ours) and the
median ratio.
The goal is ours >= 20x faster. Examples that do not lower are listed without numbers.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
RESULT = "RESULT "


# -- ours ---------------------------------------------------------------------------------
def transpile_once(path: Path) -> str:
    from pypto_ast import pipeline

    return pipeline.emit(pipeline.lower_file(str(path)), "ir")


def time_ours(path: Path, repeat: int):
    """Median milliseconds, or None when the example does not lower."""
    from pypto_ast import pipeline

    try:
        transpile_once(path)  # warm-up: imports, caches
    except pipeline.PipelineError:
        return None
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        transpile_once(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def time_emit_ascendc(path: Path, repeat: int):
    """Median milliseconds of ``pipeline.emit(program, "ascendc")``, or None when the example
    does not lower or the emitter rejects it."""
    from pypto_ast import pipeline

    try:
        program = pipeline.lower_file(str(path))
        pipeline.emit(program, "ascendc")  # warm-up; raises KernelErrors when unsupported
    except pipeline.PipelineError:  # includes KernelErrors (EmitError, UB budget)
        return None
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        pipeline.emit(program, "ascendc")
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


# -- pypto (child process) ------------------------------------------------------------------
def pypto_child(path: str, calls: int) -> int:
    """Runs in a fresh process in a temp dir: time `calls` SIM calls of the example's kernel."""
    os.environ.pop("ASCEND_HOME_PATH", None)  # before importing pypto: runtime stub, SIM
    spec = importlib.util.spec_from_file_location("check_examples_pypto", ROOT / "scripts" / "check_examples_pypto.py")
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    result: dict = {}
    try:
        import pypto
        from pypto.frontend.parser.entry import JitCallableWrapper

        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        kernels = [k for k in vars(module).values() if isinstance(k, JitCallableWrapper)
                   and getattr(k._original_func, "__module__", None) == module.__name__]
        if len(kernels) != 1:
            raise LookupError(f"expected one frontend.jit kernel, found {len(kernels)}")
        kernel = driver._as_sim(pypto, kernels[0])  # re-decorated with run_mode=SIM
        inputs = module.example_inputs()
        args, kwargs = driver._split_args(kernels[0]._original_func, inputs)  # tensors positionally
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            kernel(*args, **kwargs)
            times.append(time.perf_counter() - start)
        result["seconds"] = times
    except BaseException as exc:  # noqa: BLE001 - reported, not raised
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()][:2]
        result["error"] = f"{type(exc).__name__}: {' '.join(lines)}"[:140]
    print(RESULT + json.dumps(result), flush=True)
    return 0


def time_pypto(path: Path, calls: int, timeout: float) -> tuple:
    """(median milliseconds or None, note)."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-{path.stem}-"))
    (work / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
    env["HOME"] = str(work / "home")
    try:
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--pypto-child", str(path),
                               "--calls", str(calls)], cwd=work, env=env, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout:.0f} s"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT):
            result = json.loads(line[len(RESULT):])
            if "error" in result:
                return None, result["error"]
            return statistics.median(result["seconds"]) * 1e3, ""
    return None, f"crashed (exit status {proc.returncode})"


def pypto_available() -> bool:
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
    probe = subprocess.run([sys.executable, "-c", "import pypto"], capture_output=True, env=env, cwd=tempfile.gettempdir())
    return probe.returncode == 0


# -- table ----------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="example stems (default: all examples/*.py)")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs of ours per example (default 20)")
    ap.add_argument("--calls", type=int, default=3, help="timed SIM calls per pypto subprocess (default 3)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per pypto subprocess")
    ap.add_argument("--no-pypto", action="store_true", help="measure ours only")
    ap.add_argument("--pypto-child", metavar="PATH", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.pypto_child:
        return pypto_child(ns.pypto_child, ns.calls)

    paths = sorted(EXAMPLES.glob("*.py"))
    if ns.names:
        paths = [p for p in paths if p.stem in {n.removesuffix(".py") for n in ns.names}]
    with_pypto = not ns.no_pypto and pypto_available()
    if not ns.no_pypto and not with_pypto:
        print("official pypto is not importable: measuring ours only", file=sys.stderr)

    print(f"{'kernel':34s} {'ours ms':>9s} {'emit ascendc ms':>16s} {'pypto ms':>10s} {'ratio':>8s}  note")
    ratios = []
    for path in paths:
        ours = time_ours(path, ns.repeat)
        if ours is None:
            print(f"{path.stem:34s} {'-':>9s} {'-':>16s} {'-':>10s} {'-':>8s}  does not lower (diagnostic golden)",
                  flush=True)
            continue
        emit_ms = time_emit_ascendc(path, ns.repeat)
        emit_text = f"{emit_ms:.2f}" if emit_ms is not None else "-"
        theirs, note = time_pypto(path, ns.calls, ns.timeout) if with_pypto else (None, "")
        ratio = theirs / ours if theirs is not None else None
        if ratio is not None:
            ratios.append(ratio)
        theirs_text = f"{theirs:.0f}" if theirs is not None else "-"
        ratio_text = f"{ratio:.0f}x" if ratio is not None else "-"
        print(f"{path.stem:34s} {ours:9.2f} {emit_text:>16s} {theirs_text:>10s} {ratio_text:>8s}  {note}".rstrip(),
              flush=True)
    if ratios:
        print(f"\nmedian ratio (pypto SIM compile / ours): {statistics.median(ratios):.0f}x over {len(ratios)} "
              f"kernels (goal >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
