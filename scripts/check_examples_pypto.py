#!/usr/bin/env python3
"""Run every example kernel of ``examples/`` through the official pypto 0.2.0 wheel in SIM mode.

What it does
------------
For each ``examples/*.py`` it starts one fresh Python process (``--child``) inside its own empty
temporary directory, with ``HOME`` pointing into that directory too: the SIM run writes an
``output/`` folder into the current directory and plog / simulation logs under
``$HOME/ascend/log/debug``, and it may kill the process (SIGSEGV, or ``exit(1)`` when the legacy
``pypto.function`` path shells out to ``bisheng``).  The child imports the example module, finds
its kernel, calls it with ``example_inputs()`` and prints one ``RESULT {json}`` line.  The parent
classifies the outcome:

* ``accepted``      the call returned normally (SIM does not compute values, so outputs are
                    not compared with ``reference()``; a later stage does that);
* ``raised``        a Python exception reached the caller (first line of its message kept);
* ``crashed``       the process died without a RESULT line (signal name or exit status).

For accepted runs it also reports, from the newest ``output/`` folder, the number of simulated
tasks and the cost-model ``Total Cycles``; and for every run the number of ``[ERROR]`` lines of
that process's plog (the real cause of a pass failure is often only there) and the first one.

Run mode for an already-decorated kernel (verified on 0.2.0)
------------------------------------------------------------
``frontend.jit`` decides the run mode when the decorator runs (``JitCallableWrapper._set_run_mode``):
an explicit ``runtime_options["run_mode"]`` wins, otherwise NPU if ``ASCEND_HOME_PATH`` is set,
else SIM.  The stored mode is re-applied inside the kernel's own config scope on every call, so
``pypto.set_options(runtime_options={"run_mode": SIM})`` before the call does **not** switch a
kernel that was decorated as NPU (it still raises ``Not npu device``), and a
``runtime_options=`` keyword at call time is rejected (``Unknown keyword argument(s):
['runtime_options']`` -- call keywords are the kernel's non-tensor parameters).  So the child
(1) removes ``ASCEND_HOME_PATH`` from its environment before importing the example (SIM is then
the default) and (2) re-decorates the example's function with
``pypto.frontend.jit(runtime_options={**its runtime options, "run_mode": pypto.RunMode.SIM}, ...)``
keeping its other option dicts, and checks the stored mode is SIM before calling.

Kernel discovery
----------------
The example module's kernel is its single ``frontend.jit`` object defined in that module.
A module without one (the legacy ``pypto.function`` example) names a plain function in
``ENTRY``; it is called with the same keyword tensors.

Usage
-----
    python scripts/check_examples_pypto.py                 # all examples, table on stdout
    python scripts/check_examples_pypto.py clean_row_softmax pitfall_output_rebind
    python scripts/check_examples_pypto.py --update-readme  # also rewrite the table in examples/README.md
    python scripts/check_examples_pypto.py --json results.json

Exit status: 0 when every ``clean_*`` example was accepted (and logged no plog error),
1 otherwise, 2 when pypto cannot be imported.  Pitfall outcomes never fail the run: they are
recorded (most pitfalls are silently accepted by pypto 0.2.0, which is why the linter exists).

Needs ``pip install pypto==0.2.0`` next to torch (2.13 CPU here; do not let pip upgrade torch).
"""
from __future__ import annotations

import argparse
import ast
import glob
import importlib.util
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
README = EXAMPLES / "README.md"
RESULT_PREFIX = "RESULT "
BEGIN_MARK = "<!-- pypto-0.2.0-results:begin -->"
END_MARK = "<!-- pypto-0.2.0-results:end -->"
# plog lines that are noise: the cost model launches matplotlib swim-lane scripts that fail
# harmlessly when matplotlib is missing.
PLOG_NOISE = ("swim_lane", "print_swim_lane", "draw_pipe")


# --------------------------------------------------------------------------- child side
def _child(path: str) -> int:
    """Import one example module, call its kernel in SIM mode, print one RESULT line."""
    os.environ.pop("ASCEND_HOME_PATH", None)  # before `import pypto`: runtime stub + SIM default
    result: dict = {"status": "accepted"}
    try:
        import pypto  # imports torch
        from pypto.frontend.parser.entry import JitCallableWrapper

        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)

        inputs = mod.example_inputs()
        entry_name = getattr(mod, "ENTRY", None)
        if entry_name is not None:
            entry = getattr(mod, entry_name)
            result["entry"] = entry_name
            result["run_mode"] = "n/a (legacy pypto.function)"
            call = lambda: entry(**inputs)
        else:
            kernels = [
                (n, v) for n, v in vars(mod).items()
                if isinstance(v, JitCallableWrapper)
                and getattr(v._original_func, "__module__", None) == mod.__name__
            ]
            if len(kernels) != 1:
                raise LookupError(f"expected exactly one frontend.jit kernel, found {[n for n, _ in kernels]}")
            name, kern = kernels[0]
            result["entry"] = name
            sim_kern = _as_sim(pypto, kern)
            mode = sim_kern._runtime_options.get("run_mode")
            result["run_mode"] = {0: "NPU", 1: "SIM"}.get(mode, repr(mode))
            if mode != pypto.RunMode.SIM.value:
                raise RuntimeError(f"could not force SIM mode (run_mode={mode!r})")
            args, kwargs = _split_args(kern._original_func, inputs)
            call = lambda: sim_kern(*args, **kwargs)
        prints = _count_prints(str(Path(path).resolve()))
        t0 = time.perf_counter()
        try:
            with prints:
                call()
        finally:
            result["seconds"] = round(time.perf_counter() - t0, 2)
            result["user_prints"] = prints.count
            if prints.first:
                result["first_print"] = prints.first
    except BaseException as exc:  # noqa: BLE001 - we report everything, including SystemExit
        # C++ errors carry a native backtrace after the message: drop those frame lines.
        lines = [ln.strip() for ln in str(exc).splitlines()
                 if ln.strip() and not re.search(r"\.so\(|\+0x[0-9a-f]+\)", ln)]
        # The generic "Errcode: XXXX!" line says little on its own (the text follows on the next
        # line); pypto's rendered parser errors may start with a "file:line:col:" location.
        while len(lines) > 1 and re.match(r"^\S+:\d+:\d+:?$", lines[0]):
            lines = lines[1:]
        message = lines[0] if lines else ""
        if len(lines) > 1 and re.search(r"Errcode: \w+!?$", message):
            message += " " + lines[1]
        result.update(status="raised", exc_type=type(exc).__name__, message=message[:300])
    sys.stdout.flush()
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


class _count_prints:
    """Count print() calls made by the example's own code while the kernel is traced.

    frontend.jit resolves `print` through the builtins when it parses the kernel, and the
    evaluated statements keep the example file as their code filename, so patching
    `builtins.print` for the duration of the call sees them; pypto's own prints come from other
    files and are not counted.
    """

    def __init__(self, filename: str):
        self.filename, self.count, self.first = filename, 0, None

    def __enter__(self):
        import builtins

        self._builtins, self._orig = builtins, builtins.print

        def counting_print(*args, **kwargs):
            if sys._getframe(1).f_code.co_filename == self.filename:
                self.count += 1
                if self.first is None:
                    self.first = " ".join(map(str, args))[:200]
            return self._orig(*args, **kwargs)

        builtins.print = counting_print
        return self

    def __exit__(self, *exc):
        self._builtins.print = self._orig
        return False


def _as_sim(pypto, kern):
    """Re-decorate a frontend.jit kernel with run_mode=SIM, keeping its other options."""
    runtime = dict(kern._runtime_options or {})
    runtime["run_mode"] = pypto.RunMode.SIM
    wrapped = pypto.frontend.jit(
        runtime_options=runtime,
        host_options=kern._host_options,
        codegen_options=kern._codegen_options,
        pass_options=kern._pass_options,
        verify_options=kern._verify_options,
        debug_options=kern._debug_options,
    )(kern._original_func)
    # The decorator snapshots its caller's locals (here: ours); restore the example module's.
    wrapped._captured_locals = kern._captured_locals
    return wrapped


def _split_args(func, inputs: dict):
    """Tensor parameters positionally in signature order; the rest by keyword."""
    import torch

    args, kwargs = [], {}
    for pname in inspect.signature(func).parameters:
        if pname not in inputs:
            continue
        value = inputs[pname]
        if isinstance(value, torch.Tensor):
            if kwargs:
                raise TypeError(f"tensor parameter {pname!r} after non-tensor parameters")
            args.append(value)
        else:
            kwargs[pname] = value
    unknown = set(inputs) - set(inspect.signature(func).parameters)
    if unknown:
        raise TypeError(f"example_inputs() names unknown parameters {sorted(unknown)}")
    return args, kwargs


# --------------------------------------------------------------------------- parent side
def _expected_codes(path: Path) -> list[str]:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    m = re.search(r"Expected diagnostics:(.*)", doc, re.DOTALL)
    return sorted(set(re.findall(r"PTO\d{3}", m.group(1)))) if m else []


def _summary_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _plog_errors(home: Path, pid: int) -> list[str]:
    errs = []
    for log in sorted(glob.glob(str(home / "ascend" / "log" / "debug" / "*" / f"*-{pid}_*.log"))):
        with open(log, errors="replace") as fh:
            for line in fh:
                if line.startswith("[ERROR]") and not any(n in line for n in PLOG_NOISE):
                    errs.append(re.sub(r"^\[ERROR\] PYPTO\(\d+\):[0-9: .-]+", "", line.strip()))
    return errs


def _sim_summary(work: Path) -> dict:
    outs = sorted(glob.glob(str(work / "output" / "output_*")), key=os.path.getmtime)
    info: dict = {"output_dirs": len(outs)}
    if not outs:
        return info
    program = Path(outs[-1]) / "program.json"
    if program.exists():
        try:
            names = [f["rawname"] for f in json.loads(program.read_text())["functions"]]
            # explicit loops only: the implicit default_loop_1 always has one loop graph, one PATH0
            explicit = [n for n in names if not n.startswith("TENSOR_default_loop_1_")]
            info["loop_graphs"] = sum(1 for n in explicit if re.fullmatch(r"TENSOR_\w+_Unroll\d+", n))
            info["paths"] = sum(1 for n in explicit if re.search(r"_Unroll\d+_PATH\d+$", n))
            info["branches"] = any(re.search(r"_PATH[1-9]\d*$", n) for n in explicit)
        except (ValueError, KeyError):
            pass
    rep = Path(outs[-1]) / "CostModelSimulationOutput" / "_simulate.stat.report.txt"
    if rep.exists():
        txt = rep.read_text(errors="replace")
        m = re.search(r"Total Cycles\.*:\s*(\d+)", txt)
        info["cycles"] = int(m.group(1)) if m else None
        m = re.search(r"Total Submit Tasks\.*:\s*(\d+)", txt)
        info["tasks"] = int(m.group(1)) if m else None
    return info


def run_one(path: Path, timeout: float, keep: bool) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"pypto-{path.stem}-"))
    env = dict(os.environ)
    env.pop("ASCEND_HOME_PATH", None)
    env["HOME"] = str(work / "home")
    env["PYTHONFAULTHANDLER"] = "1"
    (work / "home").mkdir()
    row: dict = {"example": path.stem, "expected": _expected_codes(path), "summary": _summary_line(path)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(path.resolve())],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        errors="replace",
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        rc = None
    row["wall_s"] = round(time.perf_counter() - t0, 1)
    result = None
    for line in out.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
    if result is not None:
        row.update(result)
    elif rc is None:
        row.update(status="crashed", how=f"timeout after {timeout:.0f} s")
    else:
        how = _signal_name(rc) if rc < 0 else f"exit status {rc}"
        # first two distinct informative lines, stderr before stdout (stable from run to run)
        picked: list[str] = []
        for ln in err.splitlines() + out.splitlines():
            ln = ln.strip()
            if (re.search(r"error|Error|fail|Forbid|not found", ln) and "swim" not in ln
                    and not ln.startswith(("Traceback", "File ")) and ln not in picked):
                picked.append(re.sub(r"(sh: \d+: )+", r"\1", ln)[:200])
            if len(picked) == 2:
                break
        row.update(status="crashed", how=how, message=" / ".join(picked))
    errs = _plog_errors(work / "home", proc.pid)
    row["plog_errors"] = len(errs)
    if errs:
        row["first_plog_error"] = errs[0][:300]
    row.update(_sim_summary(work))
    if keep:
        row["workdir"] = str(work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return row


def describe(row: dict) -> str:
    """One-cell description of what pypto 0.2.0 did."""
    st = row.get("status")
    if st == "accepted":
        bits = []
        if row.get("tasks") is not None:
            bits.append(f"{row['tasks']} tasks")
        if row.get("cycles") is not None:
            bits.append(f"{row['cycles']} cycles")
        if row.get("loop_graphs"):
            bits.append(f"{row['loop_graphs']} loop graph{'s' if row['loop_graphs'] > 1 else ''}")
        if row.get("branches"):  # some loop body has a runtime branch: one graph per path
            bits.append(f"{row['paths']} loop-body paths")
        if row.get("user_prints"):
            bits.append(f"kernel print() ran {row['user_prints']}x: `{row['first_print']}`")
        text = "accepted" + (f" ({', '.join(bits)})" if bits else "")
        if row.get("plog_errors"):
            text += f"; plog: {row['first_plog_error']}"
        return text
    if st == "raised":
        text = f"raised {row.get('exc_type')}: {row.get('message', '')}"
        if row.get("plog_errors"):
            text += f"; plog: {row['first_plog_error']}"
        return text
    text = f"crashed ({row.get('how')})"
    if row.get("message"):
        text += f": {row['message']}"
    if row.get("plog_errors"):
        text += f"; plog: {row['first_plog_error']}"
    return text


CODE_NAMES = {
    "PTO001": "output param rebound", "PTO002": "legacy launch, no set_device",
    "PTO003": "tile rank < op rank", "PTO004": "tile not 32-B aligned",
    "PTO005": "missing/invalid tile shape", "PTO006": "data-dependent view w/o valid_shape",
    "PTO007": "print in loop", "PTO008": "local read before write",
    "PTO009": "nested loops reuse idx_name", "PTO010": "unroll on non-innermost loop",
    "PTO011": "branch in unrolled loop: > 16 paths", "PTO012": "mergeable loop(1) regions",
    "PTO013": "too many tile ops in a loop body", "PTO014": "symbolic if in plain helper",
}


def _md(s: str) -> str:
    return s.replace("|", "\\|")


def markdown_table(rows: list[dict]) -> str:
    lines = [
        "| example | what it shows | lint codes expected | pypto 0.2.0 (SIM) |",
        "|---|---|---|---|",
    ]
    for r in rows:
        codes = "; ".join(f"{c} {CODE_NAMES.get(c, '')}".strip() for c in r["expected"]) or "none"
        lines.append(f"| `{r['example']}` | {_md(r['summary'])} | {codes} | {_md(describe(r))} |")
    return "\n".join(lines)


def update_readme(table: str) -> None:
    text = README.read_text()
    if BEGIN_MARK not in text or END_MARK not in text:
        raise SystemExit(f"{README} lacks the {BEGIN_MARK} / {END_MARK} markers")
    head, rest = text.split(BEGIN_MARK, 1)
    _, tail = rest.split(END_MARK, 1)
    README.write_text(f"{head}{BEGIN_MARK}\n{table}\n{END_MARK}{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="example stems (default: all examples/*.py)")
    ap.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per example (default 600)")
    ap.add_argument("--keep", action="store_true", help="keep the per-example scratch directories")
    ap.add_argument("--json", metavar="FILE", help="also write the raw results as JSON")
    ap.add_argument("--update-readme", action="store_true", help="rewrite the table in examples/README.md")
    ns = ap.parse_args(argv)
    if ns.child:
        return _child(ns.child)

    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m, pypto, torch; print(m.version('pypto'), torch.__version__)"],
        capture_output=True, text=True, check=False,
        env={k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"})
    if probe.returncode != 0:
        print("cannot import pypto (pip install pypto==0.2.0):\n" + probe.stderr[-2000:], file=sys.stderr)
        return 2
    print(f"pypto/torch: {probe.stdout.strip()}", file=sys.stderr)

    paths = sorted(EXAMPLES.glob("*.py"))
    if ns.names:
        wanted = {n.removesuffix(".py") for n in ns.names}
        paths = [p for p in paths if p.stem in wanted]
        missing = wanted - {p.stem for p in paths}
        if missing:
            print(f"unknown examples: {sorted(missing)}", file=sys.stderr)
            return 2
    rows = []
    for p in paths:
        row = run_one(p, ns.timeout, ns.keep)
        rows.append(row)
        print(f"{p.stem:40s} {describe(row)}", file=sys.stderr, flush=True)

    table = markdown_table(rows)
    print(table)
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=2) + "\n")
    if ns.update_readme:
        update_readme(table)

    bad = [r["example"] for r in rows
           if r["example"].startswith("clean_") and (r.get("status") != "accepted" or r.get("plog_errors"))]
    if bad:
        print(f"clean examples not accepted cleanly by pypto 0.2.0: {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ---------------------------------------------------------------------------------------------
# Results recorded on 2026-12-01 with pypto 0.2.0 + torch 2.13.0+cpu, Python 3.11, CPU host, SIM
# (`python scripts/check_examples_pypto.py`: about 1 min 40 s for the 24 examples on 2 cores).
# example                          | lint codes expected | what pypto 0.2.0 did
# ---------------------------------+---------------------+-------------------------------------
# clean_accumulate_blocks          | none                | accepted (2 tasks, 23789 cycles, 2 loop graphs, 4 loop-body
#                                  |                     |   paths)
# clean_attention_scores           | none                | accepted (8 tasks, 38583 cycles)
# clean_dynamic_rows               | none                | accepted (3 tasks, 6903 cycles, 1 loop graph)
# clean_elementwise_chain          | none                | accepted (32 tasks, 25427 cycles)
# clean_frontend_function          | none                | accepted (2 tasks, 49918 cycles)
# clean_loop_unroll_blocks         | none                | accepted (16 tasks, 26470 cycles, 3 loop graphs)
# clean_masked_where               | none                | accepted (8 tasks, 21887 cycles)
# clean_matmul_bias_relu           | none                | accepted (5 tasks, 27059 cycles)
# clean_plain_helper               | none                | accepted (8 tasks, 10784 cycles, 1 loop graph)
# clean_rms_norm                   | none                | accepted (17 tasks, 29351 cycles)
# clean_row_softmax                | none                | accepted (16 tasks, 23589 cycles)
# clean_varlen_valid_shape         | none                | accepted (8 tasks, 7903 cycles, 1 loop graph)
# pitfall_cond_in_unrolled_loop    | PTO011              | accepted (2 tasks, 23789 cycles, 3 loop graphs, 22 loop-body
#                                  |                     |   paths)
# pitfall_helper_symbolic_if       | PTO014              | raised RenderedParserError: ValueError: Not concrete value
# pitfall_legacy_function          | PTO002              | crashed (exit status 1): sh: 1: bisheng: not found /
#                                  |                     |   CompileCoreMachine failed with return code  32512, func
#                                  |                     |   operator(), file aicore_compiler.cpp, line 192; plog:
#                                  |                     |   [aicore_compiler.cpp:82][MACHINE]:ErrCode: F70002! Compile ccec
#                                  |                     |   failed.
# pitfall_loop1_regions            | PTO012              | accepted (12 tasks, 35170 cycles, 2 loop graphs)
# pitfall_matmul_no_cube_tiles     | PTO005              | raised RenderedParserError: RuntimeError: Errcode: FC4000!
#                                  |                     |   Invalid tile values: kL0=0, kL1a=0, kL1b=0, mL0=0, mL1=0, nL0=0,
#                                  |                     |   nL1=0, func CheckCubeTiling, file cube_operation_impl.cpp, line
#                                  |                     |   307
# pitfall_nested_same_idx          | PTO009              | crashed (SIGSEGV): ERROR:root:Record loop function col_blk
#                                  |                     |   failed: Errcode: F21007! / Forbid duplicate name of loop idx. It
#                                  |                     |   names i, func BeginLoopFunction, file recorder.cpp, line 238
# pitfall_output_rebind            | PTO001              | accepted (8 tasks, 21887 cycles)
# pitfall_tile_rank_3d             | PTO003              | raised RenderedParserError: Errcode: FFFFFF! Run pass failed.,
#                                  |                     |   func CompileFunction, file host_machine.cpp, line 179; plog: [ex
#                                  |                     |   pand_function.cpp:100][PASS]:[ExpandFunction.Function]:FUnction[
#                                  |                     |   TENSOR_default_loop_1_Unroll1_PATH0_hiddenfunc0] ExpandFunction
#                                  |                     |   failed: Tile shape size 2 is not matched the output shape size
#                                  |                     |   3.
# pitfall_tiny_tiles               | PTO004, PTO013      | accepted (2752 tasks, 1089279 cycles)
# pitfall_uninit_accumulator       | PTO008              | accepted (9 tasks, 101051 cycles, 1 loop graph); plog:
#                                  |                     |   [dev_workspace.h:246][MACHINE]:ErrCode: F74007!
#                                  |                     |   slotList[slotIndex].rtOutcastIter != ITEM_POOL_INVALID_INDEX
#                                  |                     |   :Root incast read from empty address.
# pitfall_unroll_outer_loop        | PTO010              | accepted (16 tasks, 10784 cycles, 3 loop graphs)
# pitfall_varlen_no_valid_shape    | PTO006, PTO007      | accepted (8 tasks, 7903 cycles, 1 loop graph, kernel print() ran
#                                  |                     |   1x: `batch b cur_len
#                                  |                     |   RUNTIME_GetInputDataInt32Dim1(ARG_seq_lens,b)`)
# Summary: every clean example is accepted.  Pitfalls pypto 0.2.0 accepts without a word:
# PTO001, PTO004, PTO006, PTO007, PTO010, PTO011, PTO012, PTO013 (PTO008 too, with only a plog
# error).  It raises for PTO003 (late; the reason is only in the plog), PTO005 and PTO014, and the
# process dies for PTO002 (exit 1 on a CPU host, device-side error on an NPU) and PTO009 (SIGSEGV).
# ---------------------------------------------------------------------------------------------
