#!/usr/bin/env python3
"""The official PyPTO examples under the pypto-ast drop-in: do they run and pass their own checks?

    python bench/dropin_examples.py PATH [--backend interp|host|interp,host] [--json OUT]
                                         [--timeout 120] [-j N] [-k SUBSTRING] [-v]

PATH is a checkout of https://github.com/hicann/pypto (fetched by you; nothing in this project
copies its code and no test reads it).  Every ``test_*`` function defined at module level in the
``.py`` files under ``PATH/examples/`` (found by reading the source) is run like this:

* one fresh subprocess per file (``python bench/dropin_examples.py --worker ...``) calls
  ``pypto_ast.dropin.install(backend)``, imports the example from its path (``sys.argv`` is the
  file alone, so an example reading ``--run_mode`` from argv at import sees its default, ``npu``;
  ``sys.path[0]`` is the example's directory, the working directory a fresh temporary one per file,
  removed afterwards, so what a test writes there -- ``RunMode.SIM``'s ``output/`` -- never lands
  in the checkout), then calls each test
  function in turn, with at most ``--timeout`` seconds per test (a test that takes longer, or
  kills the process, is a crash; the file's remaining tests go on in a new subprocess);
* the device argument.  The examples take it in two forms and guard their torch comparison by
  it; the least invasive way to have the comparison run (and a pass mean the numbers matched in
  the example's own ``torch.testing.assert_close`` / ``assert_allclose`` / ``assert``), with no
  edit and no patch of the example, is:

  - ``def test_x(device)`` (``01_beginner/basic``: ``if "npu" in device:``): the argument is
    ``CpuDevice("cpu")``, a ``str`` subclass equal to ``"cpu"`` (torch makes CPU tensors from
    it) whose ``in`` says ``"npu"`` is in it, so the NPU-only check runs;
  - ``def test_x(device_id=None, ...)`` (everything else: ``device = f"npu:{device_id}" if
    global_run_mode == pypto.RunMode.NPU and device_id is not None else "cpu"``, checks under
    ``if global_run_mode == pypto.RunMode.NPU:``): ``device_id`` keeps its default ``None``, so
    the tensors are made on the CPU while ``global_run_mode`` stays ``RunMode.NPU`` (the argv
    default) and the checks run;
  - every other parameter keeps its default (``dynamic=...``, ``cost_model_enable=True``);
* the random state: ``random``, ``numpy`` and ``torch`` are seeded with ``--seed`` (default 0)
  before each test, so a run is reproducible (the examples draw their inputs unseeded, and a few
  bf16 checks, e.g. ``basic_ops.py::test_matmul`` at ``atol=1e-3``, fail by one bf16 rounding
  step for some draws on any backend whose summation order differs from torch's CPU kernels).

  Tests that name an NPU device themselves (``torch.rand(..., device=f"npu:{id}")``) get CPU
  tensors from the drop-in's torch_npu stub (``pypto_ast.dropin``: NPU devices are the CPU).

Each test is classified:

* ``passed``       it returned (its own checks held);
* ``failed``       an ``AssertionError``: the numbers differ (or another of its asserts failed);
                   when every mismatch is one bf16/fp16 rounding step, the reason is that PTO113;
* ``unsupported``  ``pypto_ast.dropin.Unsupported`` / ``KernelError`` (an API the drop-in does not
                   provide, a kernel pypto-ast cannot lower or run: the located diagnostic),
                   or an ``AssertionError`` after the drop-in noted a request it does not serve
                   (``pypto_ast.dropin.notices()``: a ``RunMode.SIM`` kernel its cost model could
                   not estimate), that notice first;
* ``crash``        any other exception, a timeout or a dead process.

A table (file, test, outcome, one-line reason) and the totals per backend are printed; goals
(issue 11): passed >= 80 % on interp, >= 60 % on host.  ``--json OUT`` writes every result.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ("passed", "failed", "unsupported", "crash")
GOALS = {"interp": 0.80, "host": 0.60}
PROTOCOL = "@@dropin-bench@@ "


class CpuDevice(str):
    """``"cpu"`` to torch and to every string operation, except that ``"npu" in it`` is true."""

    def __contains__(self, item):
        return item == "npu" or str.__contains__(self, item)


# =============================================================================================
# discovery (the parent reads the examples' source; it never imports them)
# =============================================================================================
def example_files(base: Path) -> list:
    root = base / "examples"
    if not root.is_dir():
        raise SystemExit(f"{root}: no such directory (PATH is a checkout of hicann/pypto)")
    skip = ("validate_examples.py", "__init__.py")
    return sorted(p for p in root.rglob("*.py") if p.is_file() and p.name not in skip)


def tests_of(path: Path) -> list:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, UnicodeDecodeError):
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")]


# =============================================================================================
# the worker: one example file, some of its tests
# =============================================================================================
def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _where(exc: BaseException) -> str:
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    frame = frames[-1]
    return f" [{os.path.basename(frame.filename)}:{frame.lineno}]"


def classify(exc: BaseException) -> tuple:
    from pypto_ast.dropin import DropinError, notices
    from pypto_ast.pipeline import PipelineError

    if isinstance(exc, (DropinError, PipelineError)):
        return "unsupported", _one_line(f"{type(exc).__name__}: {exc}", 400)
    if isinstance(exc, AssertionError) and notices():
        # the test asked for something the drop-in noted it does not do (pypto's cost model) and then
        # failed: that request is the reason; the assertion follows it
        first = notices()[0]
        return "unsupported", _one_line(f"{type(first).__name__}: {first}; then AssertionError{_where(exc)}", 400)
    if isinstance(exc, AssertionError):
        from pypto_ast.render import render_concise
        from pypto_ast.rounding_steps import explain

        diag = explain(exc)
        if diag is not None:  # one rounding step per mismatch: the located PTO113 is the reason
            return "failed", _one_line(render_concise(diag), 400)
        from pypto_ast import rounding_ties

        ties = rounding_ties.diagnostics(rounding_ties.take())
        if ties:  # a cast to integers met rounding ties: the located PTO114 is the reason
            return "failed", _one_line(render_concise(ties[0]), 400)
        return "failed", _one_line(f"AssertionError: {exc}" if str(exc) else "AssertionError" + _where(exc), 240)
    return "crash", _one_line(f"{type(exc).__name__}: {exc}", 240) + _where(exc)


def _arguments(func) -> dict:
    import inspect

    kwargs = {}
    for name, param in inspect.signature(func).parameters.items():
        if name == "device" and param.default is inspect.Parameter.empty:
            kwargs[name] = CpuDevice("cpu")
        elif param.default is inspect.Parameter.empty and param.kind in (param.POSITIONAL_ONLY,
                                                                          param.POSITIONAL_OR_KEYWORD):
            kwargs[name] = None  # ``device_id`` without a default: None, the CPU
    return kwargs


def _seed_everything(seed: int) -> None:
    """Each test starts from the same random state (the examples draw their inputs unseeded)."""
    import random

    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)


def worker(path: str, backend: str, tests: list, proto) -> int:
    import importlib.util
    import signal

    def send(kind, **data):
        proto.write(PROTOCOL + json.dumps({"kind": kind, **data}) + "\n")
        proto.flush()

    sys.path.insert(0, str(ROOT))
    from pypto_ast import dropin, rounding_ties

    dropin.install(backend)
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    sys.path.insert(0, directory)
    sys.argv = [path]
    name = "dropin_example_" + Path(path).stem
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - an import failure classifies every test
        outcome, reason = classify(exc)
        for test in tests:
            send("result", test=test, outcome=outcome, reason="import: " + reason, seconds=0.0)
        return 0

    def alarm(signum, frame):
        raise TimeoutError("timeout")

    signal.signal(signal.SIGALRM, alarm)
    seed = int(os.environ.get("DROPIN_BENCH_SEED", "0"))
    for test in tests:
        send("start", test=test)
        dropin.clear_notices()
        rounding_ties.clear()
        _seed_everything(seed)
        func = getattr(module, test, None)
        start = time.perf_counter()
        try:
            if func is None:
                raise AttributeError(f"no module-level {test}")
            signal.alarm(int(os.environ.get("DROPIN_BENCH_TIMEOUT", "120")))
            try:
                func(**_arguments(func))
            finally:
                signal.alarm(0)
            outcome, reason = "passed", ""
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - every outcome is a row
            if isinstance(exc, TimeoutError) and str(exc) == "timeout":
                outcome, reason = "crash", "timeout"
            elif isinstance(exc, SystemExit):
                outcome, reason = "crash", f"SystemExit({exc.code!r})"
            else:
                outcome, reason = classify(exc)
        send("result", test=test, outcome=outcome, reason=reason, seconds=round(time.perf_counter() - start, 3))
    return 0


# =============================================================================================
# the parent
# =============================================================================================
def _reader(stream, out: queue.Queue):
    for line in stream:
        if line.startswith(PROTOCOL):
            out.put(json.loads(line[len(PROTOCOL):]))
    out.put(None)


def run_file(path: Path, tests: list, backend: str, timeout: float, verbose: bool, seed: int = 0) -> list:
    """Every test of one file: results in order; a dead or stuck worker is a crash for its test
    and a new worker takes the rest."""
    import shutil
    import tempfile

    results = []
    todo = list(tests)
    work = tempfile.mkdtemp(prefix="dropin-example-")  # the workers' working directory
    try:
        _run_workers(path, tests, todo, results, backend, timeout, verbose, seed, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    order = {t: i for i, t in enumerate(tests)}
    return sorted(results, key=lambda r: order.get(r["test"], 0))


def _run_workers(path, tests, todo, results, backend, timeout, verbose, seed, work) -> None:
    while todo:
        env = dict(os.environ, DROPIN_BENCH_TIMEOUT=str(int(timeout)), DROPIN_BENCH_SEED=str(seed),
                   PYTHONUNBUFFERED="1")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(Path(path).resolve()),
               "--backend", backend, "--tests", ",".join(todo)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=None if verbose else subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, text=True, env=env, cwd=work)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        current, started = None, time.monotonic()
        deadline = started + timeout * 2 + 60  # the import (and a first host build) gets slack
        while True:
            try:
                message = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                message = "timeout"
            if message is None or message == "timeout":
                proc.kill()
                proc.wait()
                stuck = current or (todo[0] if todo else None)
                if stuck is not None:
                    reason = f"timeout after {timeout:.0f} s" if message == "timeout" else \
                        f"the process died (exit status {proc.returncode})"
                    results.append({"test": stuck, "outcome": "crash", "reason": reason,
                                    "seconds": round(time.monotonic() - started, 3)})
                    todo.remove(stuck)
                break
            if message["kind"] == "start":
                current, started = message["test"], time.monotonic()
                deadline = started + timeout + 30
            elif message["kind"] == "result":
                results.append({k: message[k] for k in ("test", "outcome", "reason", "seconds")})
                if message["test"] in todo:
                    todo.remove(message["test"])
                current = None
                deadline = time.monotonic() + timeout + 30
        if proc.poll() is None:
            proc.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", help="a checkout of hicann/pypto")
    parser.add_argument("--backend", default="interp,host", help="interp, host or both (comma-separated)")
    parser.add_argument("--json", dest="json_out", help="write every result here")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per test (default 120)")
    parser.add_argument("--seed", type=int, default=0,
                        help="torch/numpy/random seed set before each test (default 0; the examples' inputs "
                             "are random, and a few bf16 checks sit one rounding step from their tolerance)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="files run at once (default 1)")
    parser.add_argument("-k", dest="select", default="", help="only files whose path contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the workers' stderr")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--tests", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        proto = os.fdopen(os.dup(1), "w")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # what the examples print stays out of the protocol
        return worker(args.worker, args.backend, args.tests.split(","), proto)
    if not args.path:
        parser.error("PATH is required")
    base = Path(args.path).resolve()
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    for b in backends:
        if b not in ("interp", "host"):
            parser.error(f"unknown backend {b!r}")
    files = [(p, tests_of(p)) for p in example_files(base) if args.select in str(p.relative_to(base))]
    files = [(p, t) for p, t in files if t]
    report = {"path": str(base), "backends": {}}
    status = 0
    for backend in backends:
        rows = []
        begin = time.monotonic()
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = [(p, pool.submit(run_file, p, t, backend, args.timeout, args.verbose, args.seed))
                       for p, t in files]
            for path, future in futures:
                rel = str(path.relative_to(base / "examples"))
                for result in future.result():
                    rows.append({"file": rel, **result})
                    if args.verbose:
                        print(f"[{backend}] {rel}::{result['test']} {result['outcome']} {result['reason']}",
                              file=sys.stderr, flush=True)
        elapsed = time.monotonic() - begin
        totals = collections.Counter(r["outcome"] for r in rows)
        report["backends"][backend] = {"results": rows, "totals": {o: totals[o] for o in OUTCOMES},
                                       "seconds": round(elapsed, 1)}
        print_table(backend, rows, totals, elapsed)
        share = totals["passed"] / len(rows) if rows else 0.0
        if share < GOALS[backend]:
            status = 1
    if len(backends) > 1:
        print("\ntotals per backend")
        for backend, data in report["backends"].items():
            t = data["totals"]
            n = sum(t.values())
            print(f"  {backend:7s} " + "  ".join(f"{o} {t[o]}" for o in OUTCOMES) +
                  f"  of {n}: {100.0 * t['passed'] / max(1, n):.1f}% passed (goal {GOALS[backend]:.0%}),"
                  f" {data['seconds']:.0f} s")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return status


def print_table(backend: str, rows: list, totals, elapsed: float) -> None:
    width_file = max([len(r["file"]) for r in rows] + [4])
    width_test = max([len(r["test"]) for r in rows] + [4])
    print(f"\n== backend {backend} ==")
    print(f"{'file':{width_file}s}  {'test':{width_test}s}  {'outcome':11s}  reason")
    for r in rows:
        print(f"{r['file']:{width_file}s}  {r['test']:{width_test}s}  {r['outcome']:11s}  {r['reason']}")
    print(f"\nper file ({backend})")
    per_file = collections.OrderedDict()
    for r in rows:
        per_file.setdefault(r["file"], collections.Counter())[r["outcome"]] += 1
    for name, counts in per_file.items():
        n = sum(counts.values())
        print(f"  {name:{width_file}s}  {counts['passed']:3d}/{n:<3d} passed" +
              "".join(f"  {o} {counts[o]}" for o in OUTCOMES[1:] if counts[o]))
    n = len(rows)
    print(f"\ntotal ({backend}): " + "  ".join(f"{o} {totals[o]}" for o in OUTCOMES) +
          f"  of {n}: {100.0 * totals['passed'] / max(1, n):.1f}% passed (goal {GOALS[backend]:.0%}), {elapsed:.0f} s")
    reasons = collections.Counter(_reason_class(r["reason"]) for r in rows if r["outcome"] != "passed")
    if reasons:
        print(f"top reasons ({backend}):")
        for reason, count in reasons.most_common(12):
            print(f"  {count:3d}  {reason}")


def _reason_class(reason: str) -> str:
    """A reason without its locations and numbers, so alike failures count together."""
    import re

    text = re.sub(r"\(called at [^)]*\)", "", reason)
    text = re.sub(r"\S+\.py:\d+(:\d+)?:?", "", text)
    text = re.sub(r"\[[^\]]*\.py:\d+\]", "", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)  # numbers, not the digits of PTO111 or bf16
    text = re.sub(r"kernel \S+ cannot", "kernel K cannot", text)
    return _one_line(text, 140)


if __name__ == "__main__":
    sys.exit(main())
