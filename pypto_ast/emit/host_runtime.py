"""The host runtime: our CPU implementation of the Ascend C subset, compiled once, linked
into every host program.

``host/kernel_operator.h`` only declares the API (thin inline wrappers over type-erased
calls); the checks and loops live in ``host/runtime/*.cpp``.  Those are compiled once per
compiler and header contents into the build cache, with -O3 (the vectorised float paths need
it), and a program's own translation units -- a control program and a few kernels, mostly
calls -- compile at -O2 in well under a second each (docs/design.md §7).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Mapping

from . import build

HEADER_DIR = Path(__file__).parent / "host"
RUNTIME_DIR = HEADER_DIR / "runtime"
RUNTIME_FLAGS = ("-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off")
"""-O3 vectorises the runtime's chunk loops; -fno-math-errno / -fno-trapping-math let sqrt and
compare-and-select loops vectorise too (no result changes: IEEE rounding is kept, no
-ffast-math).  No -march: the library stays portable (the runtime picks AVX-512 or AVX2 code at
load time itself, through target_clones); -ffp-contract=off keeps those clones from fusing a
multiply and an add into an FMA (g++'s default in GNU C++ is to fuse where the ISA has FMA),
which would round once instead of twice and change the bits."""


def runtime() -> build.Objects:
    """The runtime's sources as prebuilt objects (re-read only when a file changes)."""
    files = sorted(RUNTIME_DIR.glob("*.cpp"))
    return _runtime(tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


@functools.lru_cache(maxsize=4)
def _runtime(files: tuple) -> build.Objects:
    sources = {Path(path).name: Path(path).read_text() for path, _, _ in files}
    return build.Objects(sources, include_dirs=[HEADER_DIR], flags=RUNTIME_FLAGS, label="the host runtime")


def runtime_objects(*, cache_dir=None, progress: build.Progress = None) -> list[Path]:
    """Paths of the runtime's object files, built into the cache on first use."""
    return runtime().paths(cache_dir=cache_dir, progress=progress)


def build_program(sources: Mapping[str, str], *, cache_dir=None, extra_flags=(), progress: build.Progress = None,
                  always_compile=None, no_cache: bool = False) -> Path:
    """Build ``sources`` (emitted kernels and control program, or any host C++ against
    kernel_operator.h) into a shared library linked with the runtime; returns its path."""
    return build.build_host_library(sources, include_dirs=[HEADER_DIR], extra_flags=extra_flags, link=runtime(),
                                    cache_dir=cache_dir, progress=progress, always_compile=always_compile,
                                    no_cache=no_cache)
