#!/usr/bin/env python3
"""Compile every kernel TU the test suite's programs emit against the real Ascend C headers.

    PYPTO_AST_ASC_DEVKIT=/path/to/asc-devkit python scripts/check_real_headers.py [-j N] [--source S]...

The programs, as the tests lower them (each kernel TU is checked once, deduplicated by sha256):

* ``examples``: ``examples/*.py``, lowered from source (pypto-transpile, the goldens) and with the
  module's ``example_inputs()`` (tests/emit_host/test_host_all_kernels.py);
* ``differential``: ``tests/differential/kernels/*.py``, the same two ways;
* ``goldens``: the committed kernels of ``tests/golden/ascendc/``;
* ``edge``: the kernel of every case of tests/emit_host/test_edge_semantics.py (``_cases()``).

A program the emitter refuses (PTO109/PTO110) has no TU and is not counted.  Each failure is
printed with the compiler's messages, then the figure: how many distinct TUs were checked and
how many compile.  Exit status 1 when any fails, 2 when the devkit cannot be used.
pypto_ast/emit/realheaders.py does the compiling; docs/realheaders.md explains the check.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pypto_ast import live, pipeline  # noqa: E402
from pypto_ast.emit import realheaders  # noqa: E402

SOURCES = ("examples", "differential", "goldens", "edge")


def emitted_units(program) -> list[realheaders.Unit]:
    """The kernel TUs of ``program``, or none when the emitter refuses it."""
    try:
        return realheaders.kernel_units(pipeline.emit(program, "ascendc"))
    except pipeline.PipelineError:  # KernelErrors included: the emitter's PTO109, the UB plan's PTO110
        return []


def module_units(path: Path) -> list[realheaders.Unit]:
    """A kernel module's TUs, lowered from its source and with its own ``example_inputs()``."""
    units = []
    with contextlib.redirect_stdout(io.StringIO()):  # kernels that print() while lowered
        with contextlib.suppress(pipeline.PipelineError):
            units += emitted_units(pipeline.lower_file(str(path)))
        with contextlib.suppress(pipeline.PipelineError):
            module = live.load_module(str(path))
            if hasattr(module, "example_inputs"):
                units += emitted_units(pipeline.lower(live.find_kernel(module), module.example_inputs()))
    return units


def golden_units() -> list[realheaders.Unit]:
    units = []
    for manifest in sorted((ROOT / "tests" / "golden" / "ascendc").glob("*/manifest.json")):
        files = {p.name: p.read_text(encoding="utf-8") for p in manifest.parent.iterdir()}
        units += realheaders.kernel_units(files)
    return units


def _load_test_module(path: Path):
    for folder in (ROOT / "tests", path.parent):  # the module's own imports (support.py, ...)
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    name = f"_check_real_headers_{path.stem}"  # not the name pytest gives it
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def edge_units() -> list[realheaders.Unit]:
    """The edge-value cases' kernels, written and lowered as the test's ``_program`` does."""
    edge = _load_test_module(ROOT / "tests" / "emit_host" / "test_edge_semantics.py")
    units = []
    for case in edge.CASES.values():
        ident = "".join(ch if ch.isalnum() else "_" for ch in case.name)
        with tempfile.TemporaryDirectory(prefix="pypto-edge-") as tmp:
            path = os.path.join(tmp, f"edge_{ident}.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(case.source())
            with contextlib.suppress(pipeline.PipelineError):
                units += emitted_units(pipeline.lower(live.find_kernel(live.load_module(path))))
    return units


def collect(source: str) -> list[realheaders.Unit]:
    """The kernel TUs of one of ``SOURCES``."""
    if source == "examples":
        return [u for p in sorted((ROOT / "examples").glob("*.py")) for u in module_units(p)]
    if source == "differential":
        return [u for p in sorted((ROOT / "tests" / "differential" / "kernels").glob("k*.py"))
                for u in module_units(p)]
    if source == "goldens":
        return golden_units()
    if source == "edge":
        return edge_units()
    raise ValueError(f"unknown source {source!r} (one of {', '.join(SOURCES)})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devkit", default=os.environ.get(realheaders.DEVKIT_ENV),
                    help=f"the asc-devkit checkout (default: ${realheaders.DEVKIT_ENV})")
    ap.add_argument("--source", action="append", choices=SOURCES, help="only these programs (default: all)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="compilers at once (default 1)")
    ns = ap.parse_args(argv)
    if not ns.devkit:
        print(f"error: {realheaders.SKIP_REASON}", file=sys.stderr)
        return 2
    start = time.monotonic()
    units = {}
    for source in ns.source or SOURCES:
        found = collect(source)
        print(f"{source}: {len(found)} kernel TUs ({len({u.key for u in found})} distinct)", file=sys.stderr)
        units.update((u.key, u) for u in found)
    try:
        with realheaders.Checker(ns.devkit) as checker:
            failures = checker.check_all(units.values(), jobs=ns.jobs)
    except realheaders.DevkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for failure in failures:
        print(f"FAIL {failure}\n", file=sys.stderr)
    print(f"{len(units)} distinct kernel TUs checked against {ns.devkit}: {len(units) - len(failures)} pass, "
          f"{len(failures)} fail ({time.monotonic() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
