"""Host backend run time per kernel, against torch eager on the CPU measured in the same run.

  python bench/host_kernels.py [--runs 5] [--repeat 5] [--quick] [--threads N]

Kernels (PyPTO source written into a temp dir, then load_module + find_kernel + lower):

  chain    a 9-op fp32 elementwise chain (add, mul scalar, exp, sub, maximum, abs,
           add scalar, sqrt, div) over [4096, 1024] (4M elements), tile [4, 1024]
  softmax  row softmax (amax, sub, exp, sum, div; keepdim) over [4096, 1024] fp32, tile [4, 1024]
  ([8, 1024] is over the ascend910b UB budget with double buffering for both kernels.)
  matmul   512x512x512 fp16 matmul, fp32 result, cube tiles [128, 128] x [64, 256] x [128, 128]
           (eager: torch.matmul in fp16 on the CPU, then .float())

Each of --runs rounds measures every kernel once (each figure the median of --repeat calls);
the table gives the median over the rounds and its min-max spread, and names the CPU.

Columns:
  host ms   time inside the library's pypto_run (the control program and its kernels; the
            Python side of run_host -- argument checks, the build-cache lookup, ctypes -- is
            left out); the library is built once before, untimed; the blocks of each launch
            run on knobs.host_threads threads (PYPTO_AST_HOST_THREADS, --threads; 0 = one per
            core, capped by the block count)
  eager ms  the same computation in torch eager on the CPU
  copy floor ms
            torch ``dst.copy_(src)`` moving the kernel's minimum GM traffic (every input read
            once, every output written once: half read, half written): what memory bandwidth
            alone costs
  eager/host  > 1 means the host backend is faster (median of the per-round ratios)
  host/floor  how far the host kernel is from the bandwidth floor
  GM/min    GM traffic (gm_to_ub + ub_to_gm bytes) over the minimum, from pipeline.run(..., stats=...)
  emit ms   lower + emit("ascendc") (no build)
Outputs are checked against eager (runner.outputs_match, torch.testing.assert_close's rule).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHAIN = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def chain(x: pypto.Tensor((ROWS, COLS), F32), y: pypto.Tensor((ROWS, COLS), F32),
          out: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(TILE, COLS)
    a = x + y
    b = a * 0.5
    c = pypto.exp(b)
    d = c - y
    e = pypto.maximum(d, x)
    f = pypto.abs(e)
    g = f + 1.0
    h = pypto.sqrt(g)
    out[:] = h / g
'''

SOFTMAX = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def softmax(x: pypto.Tensor((ROWS, COLS), F32), out: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(TILE, COLS)
    row_max = pypto.amax(x, -1, keepdim=True)
    e = pypto.exp(x - row_max)
    denom = pypto.sum(e, -1, keepdim=True)
    out[:] = e / denom
'''

MATMUL = '''
import pypto


@pypto.frontend.jit
def matmul(a: pypto.Tensor((M, K), pypto.DT_FP16), w: pypto.Tensor((K, N), pypto.DT_FP16),
           out: pypto.Tensor((M, N), pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])
    out[:] = pypto.matmul(a, w, pypto.DT_FP32)
'''


def eager_chain(x, y):
    import torch

    g = torch.abs(torch.maximum(torch.exp((x + y) * 0.5) - y, x)) + 1.0
    return torch.sqrt(g) / g


def eager_softmax(x):
    import torch

    e = torch.exp(x - torch.amax(x, -1, keepdim=True))
    return e / torch.sum(e, -1, keepdim=True)


def eager_matmul(a, w):
    import torch

    return torch.matmul(a, w).float()  # fp16 on the CPU, as the kernel's inputs


def cases(quick: bool):
    """(name, label, source, inputs, eager fn, eager args, tolerances)."""
    import torch

    rows, cols, mnk = (256, 1024, 128) if quick else (4096, 1024, 512)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(rows, cols, generator=g), torch.randn(rows, cols, generator=g)
    a = torch.randn(mnk, mnk, generator=g).half()
    w = (torch.randn(mnk, mnk, generator=g) / 16).half()
    shape = f"[{rows}, {cols}] fp32"
    sub = {"ROWS": rows, "COLS": cols, "TILE": 4, "M": mnk, "K": mnk, "N": mnk}
    return [
        ("chain", f"9-op chain {shape}", CHAIN, sub, {"x": x, "y": y, "out": torch.zeros(rows, cols)},
         eager_chain, (x, y), dict(rtol=1e-5, atol=1e-6)),
        ("softmax", f"row softmax {shape}", SOFTMAX, sub, {"x": x, "out": torch.zeros(rows, cols)},
         eager_softmax, (x,), dict(rtol=1e-5, atol=1e-7)),
        ("matmul", f"matmul {mnk}^3 fp16", MATMUL, sub,
         {"a": a, "w": w, "out": torch.zeros(mnk, mnk)}, eager_matmul, (a, w), dict(rtol=2e-3, atol=2e-3)),
    ]


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


class KernelClock:
    """Times the library's pypto_run calls (the control program and its kernels) inside
    run_host, leaving out the Python side (argument checks, the build-cache lookup, ctypes)."""

    def __init__(self):
        from pypto_ast.emit import host_backend

        self.times: list[float] = []
        real = host_backend.load_library
        clock = self

        class Lib:
            def __init__(self, lib):
                self.lib = lib

            def __getattr__(self, name):
                return clock.wrap(self.lib.pypto_run) if name == "pypto_run" else getattr(self.lib, name)

        host_backend.load_library = lambda path: Lib(real(path))

    def wrap(self, fn):
        clock = self

        class Timed:
            def __setattr__(self, name, value):
                setattr(fn, name, value)

            def __call__(self, *args):
                start = time.perf_counter()
                rc = fn(*args)
                clock.times.append(time.perf_counter() - start)
                return rc

        return Timed()

    def median_ms(self, call, repeat: int) -> float:
        self.times.clear()
        for _ in range(repeat):
            call()
        return statistics.median(self.times) * 1e3


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def write_kernel(tmp: Path, name: str, template: str, sub: dict) -> Path:
    text = re.sub(r"\b(" + "|".join(sub) + r")\b", lambda m: str(sub[m.group(1)]), template)
    path = tmp / f"{name}.py"
    path.write_text(text)
    return path


def spread(values: list[float], fmt: str = ".2f") -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="calls per measurement (their median is one sample)")
    ap.add_argument("--runs", type=int, default=5, help="rounds over all kernels; figures are medians over rounds")
    ap.add_argument("--quick", action="store_true", help="small shapes ([256, 1024], 128^3)")
    ap.add_argument("--threads", type=int, default=None,
                    help="host backend threads (sets knobs.host_threads; default: the knob, 0 = one per core)")
    args = ap.parse_args()

    import torch

    from pypto_ast import knobs, live, pipeline
    from pypto_ast.emit.host_backend import run_host
    from pypto_ast.runner import outputs_match

    if args.threads is not None:
        knobs.host_threads = args.threads
    cores = os.cpu_count() or 1
    host_threads = f"{knobs.host_threads} thread(s)" if knobs.host_threads else f"auto, up to {cores} thread(s)"
    print(f"{cpu_name()}, {cores} cores; torch {torch.__version__}, {torch.get_num_threads()} threads (eager); "
          f"host backend: {host_threads}; {args.runs} rounds of {args.repeat} calls")
    clock = KernelClock()
    kernels = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, label, template, sub, inputs, eager, eager_args, tol in cases(args.quick):
            path = write_kernel(Path(tmp), name, template, sub)
            kernel = live.find_kernel(live.load_module(str(path)))
            row = {"label": label, "eager": [], "host": [], "floor": [], "emit": []}
            try:
                program = pipeline.lower(kernel, inputs)
                files = pipeline.emit(program, "ascendc")
                stats: dict = {}
                pipeline.run(program, inputs, "host", stats=stats)  # builds once: warms the cache
            except pipeline.KernelErrors as exc:
                message, span = exc.findings[0]
                row["error"] = "not supported by the host backend yet" if "does not support" in message else "failed"
                row["detail"] = f"{path.name}:{span.line}: {message}" if span else message
                kernels.append((row, None))
                continue
            expected = eager(*eager_args)
            rtol, atol = tol["rtol"], tol["atol"]
            assert outputs_match(inputs["out"], expected, rtol, atol), f"{name}: host output differs from eager"
            row["match"] = f"ok (rtol {rtol:g}, atol {atol:g})"
            row["gm"] = (stats["gm_to_ub_bytes"] + stats["ub_to_gm_bytes"]) / stats["min_bytes"]
            # The bandwidth floor: a copy_ that reads and writes min_bytes in all (half each way).
            elems = max(1, stats["min_bytes"] // 8)
            src, dst = torch.rand(elems), torch.empty(elems)

            def measure(row=row, kernel=kernel, inputs=inputs, program=program, files=files, eager=eager,
                        eager_args=eager_args, src=src, dst=dst):
                row["eager"].append(median_ms(lambda: eager(*eager_args), args.repeat))
                row["host"].append(clock.median_ms(lambda: run_host(program, inputs, files=files), args.repeat))
                row["floor"].append(median_ms(lambda: dst.copy_(src), args.repeat))
                row["emit"].append(median_ms(lambda: pipeline.emit(pipeline.lower(kernel, inputs), "ascendc"),
                                             args.repeat))

            kernels.append((row, measure))
        for _ in range(args.runs):
            for _, measure in kernels:
                if measure is not None:
                    measure()

    rows = [r for r, _ in kernels]
    width = max(len(r["label"]) for r in rows)
    print(f"{'kernel':<{width}}  {'host ms':>19}  {'eager ms':>19}  {'copy floor ms':>19}  {'eager/host':>10}  "
          f"{'host/floor':>10}  {'GM/min':>6}  {'emit ms':>7}  outputs")
    for r in rows:
        if "error" in r:
            print(f"{r['label']:<{width}}  {r['error']}  ({r['detail']})")
            continue
        ratio = statistics.median(e / h for e, h in zip(r["eager"], r["host"]))
        floor = statistics.median(h / f for h, f in zip(r["host"], r["floor"]))
        print(f"{r['label']:<{width}}  {spread(r['host']):>19}  {spread(r['eager']):>19}  {spread(r['floor'], '.3f'):>19}  "
              f"{ratio:9.2f}x  {floor:9.1f}x  {r['gm']:6.2f}  {statistics.median(r['emit']):7.2f}  {r['match']}")


if __name__ == "__main__":
    main()
