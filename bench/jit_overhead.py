"""``@pypto_ast.jit`` call overhead on the host backend, for a tiny kernel (an 8x8 fp32 add).

    python bench/jit_overhead.py [--calls 2000] [--batches 15] [--runs 5] [--no-empty]

Every figure comes from fresh ``python`` subprocesses (medians; min-max in brackets):

  warm call      one call of the decorated kernel once it is compiled and loaded: argument
                 checks (the pre-key: dtypes, shapes, devices, the kernel file's stat), pointer
                 packing and ``pypto_run``; per-call mean of a batch of --calls calls
  bare ctypes    ``pypto_run`` of the *same* library called through ctypes with the argument
                 arrays prepared once: the floor a warm call cannot go under
  added          warm call - bare ctypes (goal: <= 20 us), per interleaved pair of batches; also
                 fastest warm batch - fastest bare batch
  cold           the first call with an empty cache directory: lint, lower, emit, compile (the
                 host runtime's prebuilt objects copied in, as after any earlier build with
                 this compiler; --no-empty skips the run that builds them too), load, run
  new process    the first call in a new process with that cache warm (goal: < 100 ms),
                 measured inside the child from just before the call to just after it; the
                 process total (interpreter start, torch and pypto_ast imports included) too.
                 Run once with the environment as it is and once with a bytecode cache
                 (PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE unset), since a first call
                 imports the host backend's modules.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = "RESULT "

KERNEL = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32


@pypto_ast.jit(backend="host")
def add8(x: pypto.Tensor((8, 8), F32), y: pypto.Tensor((8, 8), F32), out: pypto.Tensor((8, 8), F32)):
    pypto.set_vec_tile_shapes(8, 8)
    out[:] = x + y
'''

FIRST_CALL = r'''
import json, sys, time
import torch
from pypto_ast import live
module = live.load_module(sys.argv[1])
x, y, out = torch.randn(8, 8), torch.randn(8, 8), torch.zeros(8, 8)
start = time.perf_counter()
module.add8(x, y, out)
first = time.perf_counter() - start
assert torch.equal(out, x + y)
print("RESULT " + json.dumps({"first_s": first, "stats": module.add8.cache_stats}))
'''

WARM = r'''
import ctypes, json, statistics, sys, time
import torch
from pypto_ast import live
from pypto_ast.emit import build
module, calls, batches = live.load_module(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
kernel = module.add8
x, y, out = torch.randn(8, 8), torch.randn(8, 8), torch.zeros(8, 8)
kernel(x, y, out)
assert torch.equal(out, x + y)
(spec,) = set(kernel._fast.values())
# the same library, called bare: arguments prepared once, pypto_run through ctypes
lib = build.load_library(spec.library)
run = lib.pypto_run
run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
run.restype = ctypes.c_int
ptrs = (ctypes.c_void_p * 3)(x.data_ptr(), y.data_ptr(), out.data_ptr())
scalars = (ctypes.c_int64 * 1)()
dims = (ctypes.c_int64 * 24)(*([8, 8] + [1] * 6) * 3)
assert run(ptrs, scalars, dims) == 0

def warm():
    t = time.perf_counter()
    for _ in range(calls):
        kernel(x, y, out)
    return (time.perf_counter() - t) / calls * 1e6

def bare():
    t = time.perf_counter()
    for _ in range(calls):
        run(ptrs, scalars, dims)
    return (time.perf_counter() - t) / calls * 1e6

warm(); bare()
w, b = [], []
for _ in range(batches):  # interleaved, so drift hits both
    w.append(warm())
    b.append(bare())
print("RESULT " + json.dumps({"warm_us": w, "bare_us": b, "added_us": [p - q for p, q in zip(w, b)]}))
'''


def child(script: str, args: list, env: dict) -> tuple[dict, float]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, env=env)
    total = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"child failed:\n{proc.stderr[-4000:]}")
    line = next(line for line in proc.stdout.splitlines() if line.startswith(RESULT))
    return json.loads(line[len(RESULT):]), total


def seed_runtime(cache: Path, env: dict) -> None:
    """Copy the host runtime's objects into ``cache`` from the caller's cache (PYPTO_AST_CACHE_DIR
    or the default one; built there once if they are not there yet)."""
    script = ("import json; from pypto_ast.emit import host_runtime; "
              "print('RESULT ' + json.dumps(str(host_runtime.runtime_objects()[0].parent)))")
    entry, _ = child(script, [], dict(env, **{k: v for k, v in os.environ.items() if k == "PYPTO_AST_CACHE_DIR"}))
    root = cache / "v2"
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(cache, 0o700)
    os.chmod(root, 0o700)
    shutil.copytree(entry, root / Path(entry).name)


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} logical CPUs"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs"


def med(values) -> str:
    return f"{statistics.median(values):.1f} [{min(values):.1f}-{max(values):.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed batch")
    parser.add_argument("--batches", type=int, default=15, help="timed batches (warm and bare interleaved)")
    parser.add_argument("--runs", type=int, default=5, help="new processes per first-call figure")
    parser.add_argument("--no-empty", action="store_true", help="skip the cold call that builds the host runtime too")
    opts = parser.parse_args()

    import torch

    work = Path(tempfile.mkdtemp(prefix="pypto-ast-jit-bench-"))
    try:
        kernel = work / "tiny_kernel.py"
        kernel.write_text(textwrap.dedent(KERNEL).lstrip())
        base = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_AST_")}
        print(f"CPU: {cpu()}; load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; Python {platform.python_version()}, torch {torch.__version__}")
        print(f"kernel: 8x8 fp32 add (host backend); PYTHONDONTWRITEBYTECODE="
              f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")

        results = {}
        if not opts.no_empty:
            empty = work / "empty-cache"
            data, total = child(FIRST_CALL, [kernel], dict(base, PYPTO_AST_CACHE_DIR=str(empty)))
            results["cold_empty"] = (data["first_s"], total)
        cache = work / "cache"
        seed_runtime(cache, base)
        env = dict(base, PYPTO_AST_CACHE_DIR=str(cache))
        data, total = child(FIRST_CALL, [kernel], env)
        assert data["stats"]["compiles"] >= 1, data
        results["cold"] = (data["first_s"], total)

        firsts, totals = [], []
        for _ in range(opts.runs):
            data, total = child(FIRST_CALL, [kernel], env)
            assert data["stats"]["compiles"] == 0, data
            firsts.append(data["first_s"] * 1e3)
            totals.append(total)
        pyc = work / "pycache"
        env_pyc = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env_pyc["PYTHONPYCACHEPREFIX"] = str(pyc)
        child(FIRST_CALL, [kernel], env_pyc)  # writes the bytecode
        firsts_pyc, totals_pyc = [], []
        for _ in range(opts.runs):
            data, total = child(FIRST_CALL, [kernel], env_pyc)
            firsts_pyc.append(data["first_s"] * 1e3)
            totals_pyc.append(total)

        warm, _ = child(WARM, [kernel, opts.calls, opts.batches], env)

        print()
        print(f"warm call           {med(warm['warm_us'])} us")
        print(f"bare ctypes         {med(warm['bare_us'])} us  (pypto_run of the same library)")
        print(f"added               {med(warm['added_us'])} us  (goal <= 20 us)")
        print(f"  best batches      {min(warm['warm_us']) - min(warm['bare_us']):.1f} us  "
              "(fastest warm batch - fastest bare batch: less sensitive to other load on the machine)")
        print(f"cold, runtime built {results['cold'][0]:.2f} s first call  ({results['cold'][1]:.2f} s process)")
        if "cold_empty" in results:
            print(f"cold, empty cache   {results['cold_empty'][0]:.2f} s first call  "
                  f"({results['cold_empty'][1]:.2f} s process; the host runtime built too)")
        print(f"new process         {med(firsts)} ms first call  ({med(totals)} s process)  (goal < 100 ms)")
        print(f"  with bytecode     {med(firsts_pyc)} ms first call  ({med(totals_pyc)} s process)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
