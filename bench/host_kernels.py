"""Host backend run time per kernel, against torch eager, torch.compile and a copy_ floor on the
CPU, all measured in the same run.

  python bench/host_kernels.py [--runs 5] [--repeat 5] [--quick] [-k NAME ...] [--threads N]
                               [--budget S] [--no-compile] [--json OUT]

Kernels (PyPTO source written into a temp dir, then load_module + find_kernel + lower), each at
three sizes (small / medium / large; matmul also at 2048^3), --quick for the small ones only,
-k NAME (repeatable or comma-separated) for a selection:

  chain       a 9-op fp32 elementwise chain (add, mul scalar, exp, sub, maximum, abs,
              add scalar, sqrt, div) over [R, 1024], R = 1024 / 4096 / 16384, tile [4, 1024]
  softmax     row softmax (amax, sub, exp, sum, div; keepdim) over [R, 1024] fp32, tile [4, 1024]
  layernorm   layer norm over the last axis, fp32: mean, centre, var, rsqrt, * gamma + beta
              ((1, 1024) each), over [R, 1024], tile [4, 1024]
              ([8, 1024] is over the ascend910b UB budget with double buffering for these three.)
  chain_bf16  a 6-op bf16 elementwise chain (add, mul scalar, maximum, sub, abs, add scalar),
              bf16 in and out, over [R, 1024], tile [8, 1024] (16 KiB, as the fp32 tile)
  attention   one attention head: softmax(q @ k^T * 1/sqrt(D)) @ v, q/k/v [S, 128] fp16, scores and
              softmax in fp32, the probabilities cast to fp16 for the second matmul, fp32 result;
              S = 256 / 512 / 1024; cube tiles [128, 128] x [64, 256] x [128, 128], vec tile [4, S]
  matmul      N^3 fp16 matmul, fp32 result, N = 256 / 512 / 1024 / 2048,
              cube tiles [128, 128] x [64, 256] x [128, 128]

Each of --runs rounds measures every kernel once (each figure the median of --repeat calls);
the table gives the median over the rounds and its min-max spread, and names the CPU.

Columns:
  host ms   time inside the library's pypto_run (the control program and its kernels; the
            Python side of run_host -- argument checks, the build-cache lookup, ctypes -- is
            left out); the library is built once before, untimed; the blocks of each launch
            run on knobs.host_threads threads (PYPTO_AST_HOST_THREADS, --threads; 0 = one per
            core, capped by the block count)
  eager ms  the same computation in torch eager on the CPU.  For matmul and attention two forms
            are timed, the matmuls on the fp16 inputs (torch.matmul in fp16) and on the inputs
            cast to fp32 (a.float() @ w.float()), and the faster is reported (its form in the
            label's [..] tag): fp16 matmul on CPUs without AVX512-FP16 / AMX is very slow in
            torch and would flatter the host backend.  A form whose first call takes over 1 s and
            10x the other form's is left out of the rounds (its probe time is in the JSON).
  compile ms
            torch.compile(dynamic=False) of the eager form (inductor's CPU C++ backend; for
            matmul / attention the fp32 form): compiled once and warmed untimed, then timed.  If
            compilation fails the column says n/a and a footnote gives the reason.
  copy floor ms
            torch ``dst.copy_(src)`` moving the kernel's minimum GM traffic (every input read
            once, every output written once: half read, half written): what memory bandwidth
            alone costs
  host/floor, host/compile, host/eager
            the host time over the others (median of the per-round ratios; > 1 means the host
            backend is slower)
  GM/min    GM traffic (gm_to_ub + ub_to_gm bytes) over the minimum, from pipeline.run(..., stats=...)
  emit ms   lower + emit("ascendc") (no build)
A measurement whose calls pass --budget seconds (default 10) stops early, at one call or more;
a footnote names it.
Outputs (host, and torch.compile's) are checked against the eager fp32 reference
(runner.outputs_match, torch.testing.assert_close's rule).  --json OUT writes every figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

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

LAYERNORM = '''
import pypto
F32 = pypto.DT_FP32


@pypto.frontend.jit
def layernorm(x: pypto.Tensor((ROWS, COLS), F32), gamma: pypto.Tensor((1, COLS), F32),
              beta: pypto.Tensor((1, COLS), F32), out: pypto.Tensor((ROWS, COLS), F32)):
    pypto.set_vec_tile_shapes(TILE, COLS)
    mean = pypto.sum(x, -1, keepdim=True) * (1.0 / COLS)
    d = x - mean
    var = pypto.sum(d * d, -1, keepdim=True) * (1.0 / COLS)
    out[:] = d * pypto.rsqrt(var + EPS) * gamma + beta
'''

CHAIN_BF16 = '''
import pypto
BF16 = pypto.DT_BF16


@pypto.frontend.jit
def chain_bf16(x: pypto.Tensor((ROWS, COLS), BF16), y: pypto.Tensor((ROWS, COLS), BF16),
               out: pypto.Tensor((ROWS, COLS), BF16)):
    pypto.set_vec_tile_shapes(TILE, COLS)
    a = x + y
    b = a * 0.5
    c = pypto.maximum(b, y)
    d = c - x
    e = pypto.abs(d)
    out[:] = e + 1.0
'''

ATTENTION = '''
import pypto
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def attention(q: pypto.Tensor((S, D), F16), k: pypto.Tensor((S, D), F16), v: pypto.Tensor((S, D), F16),
              out: pypto.Tensor((S, D), F32)):
    pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])
    pypto.set_vec_tile_shapes(4, S)
    scores = pypto.matmul(q, k, F32, b_trans=True) * SCALE
    row_max = pypto.amax(scores, -1, keepdim=True)
    e = pypto.exp(scores - row_max)
    p = e / pypto.sum(e, -1, keepdim=True)
    out[:] = pypto.matmul(pypto.cast(p, F16), v, F32)
'''

MATMUL = '''
import pypto


@pypto.frontend.jit
def matmul(a: pypto.Tensor((M, K), pypto.DT_FP16), w: pypto.Tensor((K, N), pypto.DT_FP16),
           out: pypto.Tensor((M, N), pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])
    out[:] = pypto.matmul(a, w, pypto.DT_FP32)
'''

EPS = 1e-5
COLS = 1024
HEAD_DIM = 128
VECTOR_ROWS = {"small": 1024, "medium": 4096, "large": 16384}
ATTENTION_SEQ = {"small": 256, "medium": 512, "large": 1024}
MATMUL_N = {"small": 256, "medium": 512, "large": 1024, "xlarge": 2048}
KERNELS = ("chain", "softmax", "layernorm", "chain_bf16", "attention", "matmul")


def eager_chain(x, y):
    import torch

    g = torch.abs(torch.maximum(torch.exp((x + y) * 0.5) - y, x)) + 1.0
    return torch.sqrt(g) / g


def eager_softmax(x):
    import torch

    e = torch.exp(x - torch.amax(x, -1, keepdim=True))
    return e / torch.sum(e, -1, keepdim=True)


def eager_layernorm(x, gamma, beta):
    import torch

    return torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma.view(-1), beta.view(-1), eps=EPS)


def eager_chain_bf16(x, y):
    import torch

    return torch.abs(torch.maximum((x + y) * 0.5, y) - x) + 1.0


def eager_attention_fp16(q, k, v):
    import torch

    p = torch.softmax(torch.matmul(q, k.transpose(0, 1)).float() * (1.0 / math.sqrt(q.shape[-1])), -1)
    return torch.matmul(p.half(), v).float()


def eager_attention_fp32(q, k, v):
    import torch

    p = torch.softmax((q.float() @ k.float().transpose(0, 1)) * (1.0 / math.sqrt(q.shape[-1])), -1)
    return p.half().float() @ v.float()  # the kernel's fp16 probabilities, as the reference


def eager_matmul_fp16(a, w):
    import torch

    return torch.matmul(a, w).float()  # fp16 on the CPU, as the kernel's inputs


def eager_matmul_fp32(a, w):
    return a.float() @ w.float()


@dataclass
class Case:
    name: str
    size: str
    label: str
    template: str
    sub: dict
    inputs: dict
    args: tuple                       # eager arguments
    eager: dict                       # form -> fn; the first is the reference and the compiled one
    tol: dict
    row: dict = field(default_factory=dict)
    measure: Optional[Callable] = None


def cases(names: list, quick: bool) -> list:
    import torch

    g = torch.Generator().manual_seed(0)
    out: list = []
    tile = {"chain": 4, "softmax": 4, "layernorm": 4, "chain_bf16": 8}
    for name in names:
        if name in tile:
            sizes = VECTOR_ROWS
        elif name == "attention":
            sizes = ATTENTION_SEQ
        else:
            sizes = MATMUL_N
        for size, n in sizes.items():
            if quick and size != "small":
                continue
            sub = {"ROWS": n, "COLS": COLS, "TILE": tile.get(name, 4), "EPS": EPS}
            if name == "chain":
                x, y = torch.randn(n, COLS, generator=g), torch.randn(n, COLS, generator=g)
                c = Case(name, size, f"9-op chain [{n}, {COLS}] fp32", CHAIN, sub,
                         {"x": x, "y": y, "out": torch.zeros(n, COLS)}, (x, y), {"fp32": eager_chain},
                         dict(rtol=1e-5, atol=1e-6))
            elif name == "softmax":
                x = torch.randn(n, COLS, generator=g)
                c = Case(name, size, f"row softmax [{n}, {COLS}] fp32", SOFTMAX, sub,
                         {"x": x, "out": torch.zeros(n, COLS)}, (x,), {"fp32": eager_softmax},
                         dict(rtol=1e-5, atol=1e-7))
            elif name == "layernorm":
                x = torch.randn(n, COLS, generator=g)
                gamma, beta = torch.rand(1, COLS, generator=g) + 0.5, torch.randn(1, COLS, generator=g)
                c = Case(name, size, f"layernorm [{n}, {COLS}] fp32", LAYERNORM, sub,
                         {"x": x, "gamma": gamma, "beta": beta, "out": torch.zeros(n, COLS)}, (x, gamma, beta),
                         {"fp32": eager_layernorm}, dict(rtol=1e-5, atol=1e-5))
            elif name == "chain_bf16":
                x = torch.randn(n, COLS, generator=g).bfloat16()
                y = torch.randn(n, COLS, generator=g).bfloat16()
                c = Case(name, size, f"6-op chain [{n}, {COLS}] bf16", CHAIN_BF16, sub,
                         {"x": x, "y": y, "out": torch.zeros(n, COLS, dtype=torch.bfloat16)}, (x, y),
                         {"bf16": eager_chain_bf16}, dict(rtol=1.6e-2, atol=1e-5))
            elif name == "attention":
                sub = {"S": n, "D": HEAD_DIM, "SCALE": repr(1.0 / math.sqrt(HEAD_DIM))}
                q, k, v = (torch.randn(n, HEAD_DIM, generator=g).half() for _ in range(3))
                c = Case(name, size, f"attention S={n} D={HEAD_DIM} fp16", ATTENTION, sub,
                         {"q": q, "k": k, "v": v, "out": torch.zeros(n, HEAD_DIM)}, (q, k, v),
                         {"fp32": eager_attention_fp32, "fp16": eager_attention_fp16}, dict(rtol=2e-3, atol=2e-3))
            else:
                sub = {"M": n, "K": n, "N": n}
                a = torch.randn(n, n, generator=g).half()
                w = (torch.randn(n, n, generator=g) / 16).half()
                c = Case(name, size, f"matmul {n}^3 fp16", MATMUL, sub, {"a": a, "w": w, "out": torch.zeros(n, n)},
                         (a, w), {"fp32": eager_matmul_fp32, "fp16": eager_matmul_fp16}, dict(rtol=2e-3, atol=2e-3))
            out.append(c)
    return out


BUDGET = {"seconds": 10.0, "cut": set()}  # --budget; the (label, column)s it cut short


def median_ms(fn, repeat: int, what: tuple = ()) -> float:
    """The median of `repeat` calls, or of fewer (at least one) once they took BUDGET seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        if sum(times) > BUDGET["seconds"] and len(times) < repeat:
            BUDGET["cut"].add(what)
            break
    return statistics.median(times) * 1e3


def once_ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


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

    def median_ms(self, call, repeat: int, what: tuple = ()) -> float:
        self.times.clear()
        for _ in range(repeat):
            call()
            if sum(self.times) > BUDGET["seconds"] and len(self.times) < repeat:
                BUDGET["cut"].add(what)
                break
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


def ms_fmt(values: list[float]) -> str:
    m = statistics.median(values)
    return ".3f" if m < 1 else ".2f" if m < 100 else ".0f"


def compile_fn(fn, args):
    """torch.compile(fn) compiled and warmed (untimed): (compiled fn, compile seconds) or raises."""
    import torch

    compiled = torch.compile(fn, dynamic=False)
    start = time.perf_counter()
    result = compiled(*args)
    seconds = time.perf_counter() - start
    for _ in range(2):
        compiled(*args)
    return compiled, seconds, result


def ratio(num: list[float], den: list[float]) -> Optional[float]:
    if not num or not den:
        return None
    return statistics.median(n / d for n, d in zip(num, den))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="calls per measurement (their median is one sample)")
    ap.add_argument("--runs", type=int, default=5, help="rounds over all kernels; figures are medians over rounds")
    ap.add_argument("--quick", action="store_true", help="the small size of each kernel only")
    ap.add_argument("-k", dest="kernels", action="append", default=[], metavar="NAME",
                    help=f"kernels to run (repeatable or comma-separated; of {', '.join(KERNELS)}; default all)")
    ap.add_argument("--threads", type=int, default=None,
                    help="host backend threads (sets knobs.host_threads; default: the knob, 0 = one per core)")
    ap.add_argument("--budget", type=float, default=10.0, metavar="S",
                    help="a measurement stops repeating once its calls took S seconds (at least one call; "
                         "footnoted; default 10)")
    ap.add_argument("--no-compile", action="store_true", help="leave out the torch.compile column")
    ap.add_argument("--json", metavar="OUT", help="write every figure to OUT as JSON")
    args = ap.parse_args()
    names = [n for spec in args.kernels for n in spec.split(",") if n] or list(KERNELS)
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        ap.error(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(KERNELS)}")
    names = [n for n in KERNELS if n in names]

    import torch

    from pypto_ast import knobs, live, pipeline
    from pypto_ast.emit.host_backend import run_host
    from pypto_ast.runner import outputs_match

    try:  # one static-shape graph per size of each eager function
        torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
        if hasattr(torch._dynamo.config, "recompile_limit"):
            torch._dynamo.config.recompile_limit = max(64, torch._dynamo.config.recompile_limit)
    except Exception:
        pass
    BUDGET["seconds"] = args.budget
    if args.threads is not None:
        knobs.host_threads = args.threads
    cores = os.cpu_count() or 1
    host_threads = f"{knobs.host_threads} thread(s)" if knobs.host_threads else f"auto, up to {cores} thread(s)"
    header = (f"{cpu_name()}, {cores} cores; torch {torch.__version__}, {torch.get_num_threads()} threads "
              f"(eager, compile); host backend: {host_threads}; {args.runs} rounds of {args.repeat} calls")
    print(header, flush=True)
    clock = KernelClock()
    all_cases = cases(names, args.quick)
    footnotes: list[str] = []
    slow_forms: dict = {}  # kernel name -> eager forms left out at a smaller size
    with tempfile.TemporaryDirectory() as tmp:
        for c in all_cases:
            path = write_kernel(Path(tmp), f"{c.name}_{c.size}", c.template, c.sub)
            kernel = live.find_kernel(live.load_module(str(path)))
            row = c.row
            row.update({"name": c.name, "size": c.size, "label": c.label, "host": [], "floor": [], "emit": [],
                        "eager": {form: [] for form in c.eager}, "compile": []})
            print(f"  preparing {c.label} ...", flush=True)
            try:
                program = pipeline.lower(kernel, c.inputs)
                files = pipeline.emit(program, "ascendc")
                stats: dict = {}
                start = time.perf_counter()
                pipeline.run(program, c.inputs, "host", stats=stats)  # builds once: warms the cache
                row["build_s"] = time.perf_counter() - start
            except pipeline.KernelErrors as exc:
                message, span = exc.findings[0]
                row["error"] = "not supported by the host backend yet" if "does not support" in message else "failed"
                row["detail"] = f"{path.name}:{span.line}: {message}" if span else message
                continue
            except Exception as exc:  # a build or run failure: report it, keep the other kernels
                row["error"] = "failed"
                row["detail"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                continue
            reference_form = next(iter(c.eager))
            expected = c.eager[reference_form](*c.args)
            rtol, atol = c.tol["rtol"], c.tol["atol"]
            row["tolerance"] = {"rtol": rtol, "atol": atol}
            row["match"] = bool(outputs_match(c.inputs["out"], expected, rtol, atol))
            row["gm"] = (stats["gm_to_ub_bytes"] + stats["ub_to_gm_bytes"]) / stats["min_bytes"]
            row["min_bytes"] = stats["min_bytes"]
            # Eager forms: one (cold) call each; a form hopelessly slower than another is left out.
            # A form left out at a smaller size of the kernel is left out at the larger ones unprobed.
            probes = {form: once_ms(lambda fn=fn: fn(*c.args)) for form, fn in c.eager.items()
                      if form not in slow_forms.get(c.name, ())}
            row["eager_probe_ms"] = probes
            best_probe = min(probes.values())
            forms = [f for f, ms in probes.items() if not (ms > 1000 and ms > 10 * best_probe)]
            row["eager_skipped"] = [f for f in c.eager if f not in forms]
            for f in row["eager_skipped"]:
                if f in probes:
                    slow_forms.setdefault(c.name, set()).add(f)
                    footnotes.append(f"{c.label}: eager {f} form left out of the rounds (first call "
                                     f"{probes[f]:.0f} ms, over 10x the {min(probes, key=probes.get)} form)")
                else:
                    footnotes.append(f"{c.label}: eager {f} form left out of the rounds, unprobed "
                                     f"(left out at a smaller size)")
            # torch.compile of the reference form.
            compiled = None
            if not args.no_compile:
                try:
                    compiled, row["compile_s"], got = compile_fn(c.eager[reference_form], c.args)
                    row["compile_match"] = bool(outputs_match(got, expected, rtol, atol))
                    if not row["compile_match"]:
                        footnotes.append(f"{c.label}: torch.compile output differs from eager at "
                                         f"rtol {rtol:g}, atol {atol:g}")
                except Exception as exc:
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    row["compile_error"] = f"{type(exc).__name__}: {reason}"[:300]
                    footnotes.append(f"{c.label}: torch.compile failed: {row['compile_error']}")
                    row["compile_note"] = len(footnotes)
            # The bandwidth floor: a copy_ that reads and writes min_bytes in all (half each way).
            elems = max(1, stats["min_bytes"] // 8)
            src, dst = torch.rand(elems), torch.empty(elems)
            dst.copy_(src)  # first touch of dst's pages, untimed

            def measure(c=c, row=row, kernel=kernel, program=program, files=files, forms=forms,
                        compiled=compiled, src=src, dst=dst):
                for form in forms:
                    fn = c.eager[form]
                    row["eager"][form].append(median_ms(lambda: fn(*c.args), args.repeat, (c.label, f"eager {form}")))
                if compiled is not None and "compile_error" not in row:
                    try:
                        row["compile"].append(median_ms(lambda: compiled(*c.args), args.repeat, (c.label, "compile")))
                    except Exception as exc:  # a recompilation that fails: n/a, not a crash
                        row["compile_error"] = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
                        footnotes.append(f"{c.label}: torch.compile failed when timed: {row['compile_error']}")
                        row["compile_note"] = len(footnotes)
                        row["compile"].clear()
                row["host"].append(clock.median_ms(lambda: run_host(program, c.inputs, files=files), args.repeat,
                                                   (c.label, "host")))
                row["floor"].append(median_ms(lambda: dst.copy_(src), args.repeat, (c.label, "floor")))
                row["emit"].append(median_ms(lambda: pipeline.emit(pipeline.lower(kernel, c.inputs), "ascendc"),
                                             args.repeat, (c.label, "emit")))

            c.measure = measure
        for r in range(args.runs):
            print(f"  round {r + 1}/{args.runs} ...", flush=True)
            for c in all_cases:
                if c.measure is not None:
                    c.measure()

    # Summaries: the eager column is the fastest timed form (by median over the rounds).
    for c in all_cases:
        row = c.row
        if "error" in row:
            continue
        timed = {f: v for f, v in row["eager"].items() if v}
        best = min(timed, key=lambda f: statistics.median(timed[f]))
        row["eager_form"] = best
        row["eager_best"] = timed[best]
        row["host_over_floor"] = ratio(row["host"], row["floor"])
        row["host_over_eager"] = ratio(row["host"], row["eager_best"])
        row["host_over_compile"] = ratio(row["host"], row["compile"])
        for key in ("host", "eager_best", "compile", "floor", "emit"):
            if row[key]:
                row[f"{key}_median_ms"] = statistics.median(row[key])
                row[f"{key}_min_ms"], row[f"{key}_max_ms"] = min(row[key]), max(row[key])

    rows = [c.row for c in all_cases]
    labels = [r["label"] + (f" [{r['eager_form']}]" if len(all_cases[i].eager) > 1 and "eager_form" in r else "")
              for i, r in enumerate(rows)]
    width = max(len(s) for s in labels)
    col = 21
    print()
    print(header)
    print(f"{'kernel':<{width}}  {'host ms':>{col}}  {'eager ms':>{col}}  {'compile ms':>{col}}  "
          f"{'copy floor ms':>{col}}  {'host/floor':>10}  {'host/compile':>12}  {'host/eager':>10}  "
          f"{'GM/min':>6}  {'emit ms':>7}  outputs")
    for label, r in zip(labels, rows):
        if "error" in r:
            print(f"{label:<{width}}  {r['error']}  ({r['detail']})")
            continue
        compile_col = (spread(r["compile"], ms_fmt(r["compile"])) if r["compile"] else
                       f"n/a [{r['compile_note']}]" if "compile_note" in r else "n/a")
        hc = f"{r['host_over_compile']:11.1f}x" if r["host_over_compile"] is not None else f"{'n/a':>12}"
        match = f"ok (rtol {r['tolerance']['rtol']:g}, atol {r['tolerance']['atol']:g})" if r["match"] else "DIFFER"
        print(f"{label:<{width}}  {spread(r['host'], ms_fmt(r['host'])):>{col}}  "
              f"{spread(r['eager_best'], ms_fmt(r['eager_best'])):>{col}}  {compile_col:>{col}}  "
              f"{spread(r['floor'], '.3f'):>{col}}  {r['host_over_floor']:9.1f}x  {hc}  "
              f"{r['host_over_eager']:9.2f}x  {r['gm']:6.2f}  {statistics.median(r['emit']):7.2f}  {match}")
    multi = [c for c in all_cases if len(c.eager) > 1 and "eager_form" in c.row]
    if multi:
        print("[fp32] / [fp16]: the eager form reported (matmuls on the inputs cast to fp32, or torch.matmul in fp16); "
              "the other form:")
        for c in multi:
            r = c.row
            others = [f"{f} {spread(v, ms_fmt(v))} ms" if v else
                      f"{f} not timed (first call {r['eager_probe_ms'][f]:.0f} ms)" if f in r["eager_probe_ms"] else
                      f"{f} not timed"
                      for f, v in r["eager"].items() if f != r["eager_form"]]
            print(f"  {c.label}: {'; '.join(others)}")
    for label in dict.fromkeys(label for label, _ in sorted(BUDGET["cut"])):
        cols = ", ".join(col for l, col in sorted(BUDGET["cut"]) if l == label)
        footnotes.append(f"{label}: {cols}: fewer than --repeat calls per sample (--budget {args.budget:g} s)")
    for i, note in enumerate(footnotes, 1):
        print(f"  [{i}] {note}")
    if any("error" not in r and not r["match"] for r in rows):
        print("  DIFFER: the host output does not match eager at the given tolerance")
    if args.json:
        doc = {"header": header, "cpu": cpu_name(), "cores": cores, "torch": torch.__version__,
               "torch_threads": torch.get_num_threads(), "host_threads": knobs.host_threads,
               "runs": args.runs, "repeat": args.repeat, "budget_s": args.budget, "quick": args.quick, "footnotes": footnotes,
               "kernels": rows}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {args.json}")
    if any("error" not in r and not r["match"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
