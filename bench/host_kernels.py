"""Host backend run time per kernel, against torch eager on the CPU measured in the same run.

  python bench/host_kernels.py [--repeat 5] [--quick]

Kernels (PyPTO source written into a temp dir, then load_module + find_kernel + lower):

  chain    a 9-op fp32 elementwise chain (add, mul scalar, exp, sub, maximum, abs,
           add scalar, sqrt, div) over [4096, 1024] (4M elements), tile [4, 1024]
  softmax  row softmax (amax, sub, exp, sum, div; keepdim) over [4096, 1024] fp32, tile [4, 1024]
  ([8, 1024] is over the ascend910b UB budget with double buffering for both kernels.)
  matmul   512x512x512 fp16 matmul, fp32 result, cube tiles [128, 128] x [64, 256] x [128, 128]
           (eager: torch.matmul in fp16 on the CPU, then .float())

Columns:
  emit ms   lower + emit("ascendc") (no build), median of --repeat
  host ms   run_host(program, inputs, files=...) with the library already built (the first
            call warms the build cache, untimed), median of --repeat; the blocks of each
            launch run on knobs.host_threads threads (PYPTO_AST_HOST_THREADS, --threads;
            0 = one per core, capped by the block count)
  eager ms  the same computation in torch eager on the CPU, median of --repeat
  eager/host  > 1 means the host backend is faster
  GM/min    GM traffic (gm_to_ub + ub_to_gm bytes) over the minimum (every tensor read once,
            every output written once), from pipeline.run(..., stats=...)
Outputs are checked against eager with torch.testing.assert_close.
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


def write_kernel(tmp: Path, name: str, template: str, sub: dict) -> Path:
    text = re.sub(r"\b(" + "|".join(sub) + r")\b", lambda m: str(sub[m.group(1)]), template)
    path = tmp / f"{name}.py"
    path.write_text(text)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small shapes ([256, 1024], 128^3)")
    ap.add_argument("--threads", type=int, default=None,
                    help="host backend threads (sets knobs.host_threads; default: the knob, 0 = one per core)")
    args = ap.parse_args()

    import torch

    from pypto_ast import pipeline
    from pypto_ast.emit.host_backend import run_host

    from pypto_ast import knobs

    if args.threads is not None:
        knobs.host_threads = args.threads
    cores = os.cpu_count() or 1
    host_threads = f"{knobs.host_threads} thread(s)" if knobs.host_threads else f"auto, up to {cores} thread(s)"
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads (eager); host backend: {host_threads}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, label, template, sub, inputs, eager, eager_args, tol in cases(args.quick):
            path = write_kernel(Path(tmp), name, template, sub)
            kernel = pipeline.find_kernel(pipeline.load_module(str(path)))
            eager_ms = median_ms(lambda: eager(*eager_args), args.repeat)
            row = {"label": label, "eager": eager_ms}
            try:
                program = pipeline.lower(kernel, inputs)
                files = pipeline.emit(program, "ascendc")
                row["emit"] = median_ms(lambda: pipeline.emit(pipeline.lower(kernel, inputs), "ascendc"),
                                        args.repeat)
                stats: dict = {}
                pipeline.run(program, inputs, "host", stats=stats)  # builds once: warms the cache
                row["host"] = median_ms(lambda: run_host(program, inputs, files=files), args.repeat)
            except pipeline.KernelErrors as exc:
                message, span = exc.findings[0]
                unsupported = "does not support" in message
                row["error"] = "not supported by the host backend yet" if unsupported else "failed"
                row["detail"] = f"{path.name}:{span.line}: {message}" if span else message
                rows.append(row)
                continue
            expected = eager(*eager_args)
            torch.testing.assert_close(inputs["out"], expected, **tol)
            row["match"] = f"ok (rtol {tol['rtol']:g}, atol {tol['atol']:g})"
            moved = stats["gm_to_ub_bytes"] + stats["ub_to_gm_bytes"]
            row["gm"] = moved / stats["min_bytes"]
            rows.append(row)

    width = max(len(r["label"]) for r in rows)
    print(f"{'kernel':<{width}}  {'emit ms':>8}  {'host ms':>8}  {'eager ms':>8}  {'eager/host':>10}  "
          f"{'GM/min':>6}  outputs")
    for r in rows:
        if "error" in r:
            print(f"{r['label']:<{width}}  {'-':>8}  {'-':>8}  {r['eager']:8.2f}  {'-':>10}  {'-':>6}  "
                  f"{r['error']}")
            print(f"{'':<{width}}  ({r['detail']})")
            continue
        print(f"{r['label']:<{width}}  {r['emit']:8.2f}  {r['host']:8.2f}  {r['eager']:8.2f}  "
              f"{r['eager'] / r['host']:9.2f}x  {r['gm']:6.2f}  {r['match']}")


if __name__ == "__main__":
    main()
