#!/usr/bin/env python3
"""Regenerate the whole-kernel goldens under ``tests/golden/`` from ``examples/*.py``.

    python scripts/regen_goldens.py          # rewrite every golden, delete stale ones
    python scripts/regen_goldens.py --check  # exit 1 if any golden is missing, stale or different

For each example module:

* it lowers  -> ``tests/golden/ir/<example>.ir``      (``pipeline.emit(program, "ir")``)
             -> ``tests/golden/python/<example>.py``  (``pipeline.emit(program, "python")``,
                only while ``pypto_ast/transforms/pyemit.py`` exists)
* it cannot  -> ``tests/golden/diagnostics/<example>.txt``: the exit status and the stderr
                of ``pypto-transpile examples/<example>.py`` (the rendered diagnostic), with
                the repository path cut off so the file is the same on every machine.

For each kernel in ``ASCENDC`` (a few the host backend supports), every file of
``pipeline.emit(program, "ascendc")`` (kernel sources, control.cpp, manifest.json) ->
``tests/golden/ascendc/<kernel>/<file>``.  A listed kernel the emitter rejects is an error
(exit 2): take it off the list or fix the emitter.

Lowering reads the example's source and never runs it, exactly like ``pypto-transpile``: shapes
come from the annotations or from the module's own calls of the kernel.
``tests/golden/test_goldens.py`` compares the same renderings (``render_all``) with the files.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"
KINDS = {"ir": ".ir", "python": ".py", "diagnostics": ".txt"}
REGEN_COMMAND = "python scripts/regen_goldens.py"
# Kernels whose emitted Ascend C is golden (``tests/golden/ascendc/<stem>/``): ones the host
# backend supports, small enough to review a diff of.
ASCENDC = [
    ROOT / "examples" / "clean_row_softmax.py",
    ROOT / "tests" / "differential" / "kernels" / "k01_binary_fp32.py",
    ROOT / "tests" / "differential" / "kernels" / "k07_unary_fp16.py",
    ROOT / "tests" / "differential" / "kernels" / "k16_cast_float.py",
]


class GoldenError(Exception):
    """A kernel listed for a golden could not be rendered."""


def have_pyemit() -> bool:
    return importlib.util.find_spec("pypto_ast.ir.pyemit") is not None


def examples() -> list[Path]:
    return sorted(EXAMPLES.glob("*.py"))


def golden_path(kind: str, example: str) -> Path:
    return GOLDEN / kind / f"{example}{KINDS[kind]}"


def lower_example(path: Path):
    """The example's Program, or None when pypto-transpile would stop with a diagnostic."""
    from pypto_ast import pipeline

    try:
        return pipeline.lower_file(str(path))
    except pipeline.PipelineError:  # includes KernelErrors
        return None


def transpile_diagnostic(path: Path) -> str:
    """``pypto-transpile examples/<x>.py`` as a user sees it: exit status, then stderr."""
    rel = path.relative_to(ROOT).as_posix()
    proc = subprocess.run([sys.executable, "-m", "pypto_ast.cli.transpile", rel], cwd=ROOT,
                          capture_output=True, text=True, env=_plain_env())
    stderr = proc.stderr.replace(str(ROOT) + "/", "")
    return f"$ pypto-transpile {rel}\n[exit {proc.returncode}]\n{stderr}"


def _plain_env() -> dict:
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    return env


def render(path: Path, kinds=None) -> dict[Path, str]:
    """Golden file -> expected text for one example (``kinds`` limits what is rendered)."""
    from pypto_ast import pipeline

    kinds = set(kinds or KINDS)
    program = lower_example(path)
    out: dict[Path, str] = {}
    if program is None:
        if "diagnostics" in kinds:
            out[golden_path("diagnostics", path.stem)] = transpile_diagnostic(path)
        return out
    if "ir" in kinds:
        out[golden_path("ir", path.stem)] = pipeline.emit(program, "ir")
    if "python" in kinds and have_pyemit():
        out[golden_path("python", path.stem)] = pipeline.emit(program, "python", source_path=str(path))
    return out


def ascendc_dir(kernel: str) -> Path:
    return GOLDEN / "ascendc" / kernel


def render_ascendc(path: Path) -> dict[Path, str]:
    """Golden file -> text for every file the Ascend C emitter writes for one kernel, lowered
    from its source; raises GoldenError when it does not lower or emit."""
    from pypto_ast import pipeline

    try:
        files = pipeline.emit(pipeline.lower_file(str(path)), "ascendc")
    except pipeline.PipelineError as exc:  # includes KernelErrors (EmitError, UB budget)
        raise GoldenError(f"{path.relative_to(ROOT)}: no Ascend C: {exc.message}") from None
    return {ascendc_dir(path.stem) / name: text for name, text in sorted(files.items())}


def render_all() -> dict[Path, str]:
    out: dict[Path, str] = {}
    for path in examples():
        out.update(render(path))
    for path in ASCENDC:
        out.update(render_ascendc(path))
    return out


def existing() -> set[Path]:
    kinds = [k for k in KINDS if k != "python" or have_pyemit()]
    found = {p for k in kinds for p in (GOLDEN / k).glob(f"*{KINDS[k]}")}
    return found | {p for p in (GOLDEN / "ascendc").rglob("*") if p.is_file()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="report drift instead of writing")
    ns = ap.parse_args(argv)
    try:
        wanted = render_all()
    except GoldenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stale = existing() - set(wanted)
    changed = [p for p, text in wanted.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if ns.check:
        for p in sorted(changed):
            print(f"{'out of date' if p.exists() else 'missing'}: {p.relative_to(ROOT)}")
        for p in sorted(stale):
            print(f"stale: {p.relative_to(ROOT)}")
        if changed or stale:
            print(f"regenerate with: {REGEN_COMMAND}")
        return 1 if changed or stale else 0
    for p in sorted(changed):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(wanted[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    for p in sorted(stale):
        p.unlink()
        print(f"removed {p.relative_to(ROOT)}")
        if p.parent.parent == GOLDEN / "ascendc" and not any(p.parent.iterdir()):
            p.parent.rmdir()  # a kernel taken off ASCENDC
    if not have_pyemit():
        print("python goldens skipped: pypto_ast/transforms/pyemit.py does not exist", file=sys.stderr)
    print(f"{len(wanted)} goldens, {len(changed)} written, {len(stale)} removed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
