"""Check emitted Ascend C kernels against the real Ascend C headers (mirror-cann/asc-devkit).

The host backend compiles our kernels against our own CPU implementation of the API, which says
they compute the right numbers but not that they are the API as CANN declares it.  This check is
that other half: each kernel translation unit (``<kernel>.cpp`` of ``emit_program``; never
``control.cpp``, host C++ against our runtime) is compiled with ``g++ -std=c++17 -fsyntax-only``
against a checkout of the devkit, the way the devkit's own CPU-debug unit tests build for A2
(``ASCENDC_CPU_DEBUG=1``, ``__NPU_ARCH__=2201`` and the core's defines: AIC for cube kernels, AIV
for every other).  That build also needs a few closed CANN headers (tikicpulib); ``devkit_standins/``
holds the smallest stand-ins for them that let the devkit parse.  The kernel-tiling header the
devkit generates at build time is generated here by the devkit's own script.  One thing the
CPU-debug build has and the NPU build has not is ``<cmath>`` (the devkit includes it only for the
CPU); its macros are poisoned after the headers, so a kernel spelling ``INFINITY`` fails here as it
would on the device.  docs/realheaders.md says what is checked and how to run it.

    python -m pypto_ast.emit.realheaders DEVKIT OUT_DIR...   # check directories of emitted files

The check needs the devkit, which CI has no network to fetch: ``PYPTO_AST_ASC_DEVKIT`` names a
checkout for the opt-in test (``pytest -m realheaders``) and ``scripts/check_real_headers.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional

from .. import knobs

DEVKIT_ENV = "PYPTO_AST_ASC_DEVKIT"
SKIP_REASON = f"set {DEVKIT_ENV} to a checkout of github.com/mirror-cann/asc-devkit; CI has no network"
STANDINS = Path(__file__).parent / "devkit_standins"

# the devkit's CPU-debug unit tests for ascend910B1 (tests/api/*/CMakeLists.txt), tikicpulib's
# ASCENDC_CPU_DEBUG=1 and the CPU build's ASCENDC_DUMP=0 (cmake/asc/legacy_modules/function.cmake)
COMMON_DEFINES = ("-DASCENDC_CPU_DEBUG=1", "-DASCENDC_DUMP=0", "-D__NPU_ARCH__=2201", "-D__DAV_C220__",
                  "-D__disable_kernel_type_autoinfer__=")
CORE_DEFINES = {"AIV": ("-D__DAV_C220_VEC__", "-D__DAV_VEC__"), "AIC": ("-D__DAV_C220_CUBE__", "-D__DAV_CUBE__")}
INCLUDE_DIRS = (".", "include", "include/adv_api", "include/basic_api", "impl", "impl/basic_api")
TILING_SCRIPT = "impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py"
DEVICE_LACKS = ("INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF")
"""<cmath> macros: the devkit includes <cmath> only in CPU-debug builds, so a kernel naming them
compiles there and not for the NPU."""


class DevkitError(Exception):
    """The directory is not a devkit checkout, or the check could not be prepared."""


def core_of(kind: str) -> str:
    """The AI Core a manifest kernel ``kind`` runs on: cube kernels on AIC, the rest on AIV."""
    return "AIC" if kind == "cube" else "AIV"


@dataclass(frozen=True)
class Unit:
    """One kernel translation unit: its file name, the core it runs on and its text."""

    name: str
    core: str
    text: str

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.core}\0{self.text}".encode()).hexdigest()


@dataclass(frozen=True)
class Failure:
    """A unit the real headers reject, with the compiler's own messages."""

    name: str
    core: str
    messages: str

    def __str__(self) -> str:
        return f"{self.name} ({self.core}):\n{self.messages.rstrip()}"


def kernel_units(files: Mapping[str, str]) -> list[Unit]:
    """The kernel TUs of one ``emit_program`` result, by its manifest's kernels list."""
    manifest = json.loads(files["manifest.json"])
    return [Unit(k["file"], core_of(k["kind"]), files[k["file"]]) for k in manifest["kernels"]]


class Checker:
    """Syntax-checks units against one devkit checkout.  The devkit's headers are parsed once per
    core into a precompiled header (a kernel then takes about a second); results are remembered
    by the unit's sha256, so a TU emitted by many tests is compiled once."""

    def __init__(self, devkit: str | os.PathLike, *, cxx: Optional[str] = None):
        self.devkit = Path(devkit).resolve()
        if not (self.devkit / "include" / "kernel_operator.h").is_file():
            raise DevkitError(f"{self.devkit}: not an asc-devkit checkout (no include/kernel_operator.h)")
        self.cxx = shutil.which(cxx or knobs.cxx)
        if self.cxx is None:
            raise DevkitError(f"C++ compiler {cxx or knobs.cxx!r} not on PATH (set PYPTO_AST_CXX)")
        self._tmp = tempfile.TemporaryDirectory(prefix="pypto-realheaders-")
        self.work = Path(self._tmp.name)
        self._generate_tiling_header()
        self._pch: dict[str, Path] = {}
        self.results: dict[str, Optional[Failure]] = {}

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._tmp.cleanup()

    def flags(self, core: str) -> list[str]:
        """The compiler flags of a unit for ``core`` (without the precompiled header)."""
        includes = [f"-I{STANDINS}", f"-I{self.work / 'generated'}"]
        includes += [f"-isystem{self.devkit / d}" for d in INCLUDE_DIRS]
        return ["-std=c++17", *COMMON_DEFINES, *CORE_DEFINES[core], *includes]

    def check(self, unit: Unit) -> Optional[Failure]:
        """None when the unit compiles, else its Failure."""
        if unit.key not in self.results:
            self.results[unit.key] = self._compile(unit)
        return self.results[unit.key]

    def check_all(self, units: Iterable[Unit], jobs: int = 1) -> list[Failure]:
        """The failures among ``units`` (each distinct one compiled once), ``jobs`` at a time."""
        todo = list({u.key: u for u in units if u.key not in self.results}.values())
        for core in sorted({u.core for u in todo}):
            self._header(core)  # before the threads: each is built once
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for unit, result in zip(todo, pool.map(self._compile, todo)):
                self.results[unit.key] = result
        return [f for f in (self.results[u.key] for u in units) if f is not None]

    def check_files(self, files: Mapping[str, str]) -> list[Failure]:
        """The failures among the kernel TUs of one ``emit_program`` result."""
        return self.check_all(kernel_units(files))

    # -- preparing ---------------------------------------------------------------------------

    def _generate_tiling_header(self) -> None:
        """kernel_tiling/kernel_tiling.h, which the devkit's build generates from its
        ``*_tilingdata.h`` files: generated the same way, by the devkit's own script."""
        out = self.work / "generated" / "kernel_tiling" / "kernel_tiling.h"
        script = self.devkit / TILING_SCRIPT
        proc = subprocess.run([sys.executable, str(script), str(self.devkit / "include" / "adv_api"), str(out)],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not out.is_file():
            raise DevkitError(f"{script}: could not generate kernel_tiling.h:\n{proc.stdout}{proc.stderr}")

    def _header(self, core: str) -> Path:
        """A directory holding ``kernel_operator.h`` (the devkit's, then the poisoned macros)
        and its precompiled form for ``core``; searched first, so a kernel's include finds it."""
        if core not in self._pch:
            where = self.work / f"pch-{core}"
            where.mkdir()
            header = where / "kernel_operator.h"
            header.write_text(f'#include "{self.devkit / "include" / "kernel_operator.h"}"\n'
                              f"#pragma GCC poison {' '.join(DEVICE_LACKS)}\n")
            self._run([*self.flags(core), "-x", "c++-header", str(header), "-o", f"{header}.gch"],
                      f"the devkit's kernel_operator.h does not compile for {core} with the stand-ins")
            self._pch[core] = where
        return self._pch[core]

    def _run(self, command: list[str], what: str) -> None:
        proc = subprocess.run([self.cxx, *command], capture_output=True, text=True)
        if proc.returncode != 0:
            raise DevkitError(f"{what}:\n{proc.stderr}")

    def _compile(self, unit: Unit) -> Optional[Failure]:
        where = self.work / "units" / unit.key
        where.mkdir(parents=True, exist_ok=True)
        source = where / unit.name
        source.write_text(unit.text)
        command = [self.cxx, "-fsyntax-only", "-Winvalid-pch", f"-I{self._header(unit.core)}",
                   *self.flags(unit.core), str(source)]
        proc = subprocess.run(command, capture_output=True, text=True, cwd=where)
        shutil.rmtree(where, ignore_errors=True)
        if proc.returncode == 0:
            return None
        return Failure(unit.name, unit.core, proc.stderr.replace(f"{where}/", ""))


def main(argv: Optional[list[str]] = None) -> int:
    """Check the kernels of emitted-file directories (each with its manifest.json)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("devkit", help="a checkout of github.com/mirror-cann/asc-devkit")
    parser.add_argument("dirs", nargs="+", help="directories written by pypto-transpile --emit ascendc -o DIR")
    args = parser.parse_args(argv)
    units = []
    for d in args.dirs:
        files = {p.name: p.read_text() for p in Path(d).iterdir() if p.suffix in (".cpp", ".json")}
        units += kernel_units(files)
    try:
        with Checker(args.devkit) as checker:
            failures = checker.check_all(units)
    except DevkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{len(units) - len(failures)} of {len(units)} kernel TUs compile against {args.devkit}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
