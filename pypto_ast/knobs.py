"""Run-time knobs: one documented module attribute per ``PYPTO_AST_*`` environment variable.

Read once at import (like Warp's ``warp.config``); code reads ``knobs.<name>`` at call time,
so tests and scripts may assign the attributes directly, and :func:`reload` re-reads the
environment.  ``docs/knobs.md`` lists the same knobs; ``tests/test_knobs.py`` keeps the two
in step.  (``pypto_ast/config.py`` is the *lint* configuration and stays separate.)
"""

from __future__ import annotations

import os
from pathlib import Path

BACKENDS = ("interp", "host", "npu", "auto")
HOST_CUBE_ISAS = ("auto", "baseline", "avx2", "avx512")  # index - 1 = pypto_host_set_cube's argument
_FALSE = ("", "0", "false", "no", "off")


class KnobError(ValueError):
    """A ``PYPTO_AST_*`` variable holds a value we cannot use; the message names it."""


def _flag(env: str) -> bool:
    return os.environ.get(env, "").strip().lower() not in _FALSE


def _text(env: str, default: str) -> str:
    return os.environ.get(env, "").strip() or default


def _choice(env: str, default: str, allowed: tuple[str, ...]) -> str:
    value = _text(env, default).lower()
    if value not in allowed:
        # Fail loudly: silently falling back would run a different backend than asked for.
        raise KnobError(f"{env}={value!r}: expected one of {', '.join(allowed)}")
    return value


def _count(env: str, default: int) -> int:
    value = _text(env, str(default))
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise KnobError(f"{env}={value!r}: expected a whole number >= 0")
    return number


def _user_cache_dir() -> str:
    """``$XDG_CACHE_HOME/pypto-ast`` when that is an absolute path (the XDG rule), else
    ``~/.cache/pypto-ast``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return os.path.join(xdg, "pypto-ast") if os.path.isabs(xdg) else "~/.cache/pypto-ast"


def reload() -> None:
    """Re-read every knob from the environment (import does this once)."""
    global cache_dir, always_compile, dump, backtrace, backend, cxx, host_threads, host_cube, host_fuse, ascend_driver

    cache_dir = Path(_text("PYPTO_AST_CACHE_DIR", _user_cache_dir())).expanduser()
    """Root of the compile cache (default: the user's cache directory, ``$XDG_CACHE_HOME`` or
    ``~/.cache``, then ``pypto-ast``); entries live under ``<cache_dir>/v<N>/<digest>/``."""

    always_compile = _flag("PYPTO_AST_ALWAYS_COMPILE")
    """Rebuild even when a valid cache entry exists (the fresh build replaces it)."""

    dump = _flag("PYPTO_AST_DUMP")
    """Write each pipeline stage's text (IR, Ascend C, ...) into the cache entry."""

    backtrace = _flag("PYPTO_AST_BACKTRACE")
    """Re-raise with our own Python frames instead of showing the rendered diagnostic."""

    backend = _choice("PYPTO_AST_BACKEND", "interp", BACKENDS)
    """Where ``@pypto_ast.jit`` kernels run unless the decorator names a backend: ``interp`` (IR
    interpreter), ``host`` (g++ build), ``npu`` (needs CANN and an NPU), ``auto`` (by the
    arguments' device: CPU -> host when ``cxx`` is found, else interp; NPU -> npu)."""

    cxx = _text("PYPTO_AST_CXX", "g++")
    """C++ compiler for the host backend (a name on PATH or a path)."""

    host_threads = _count("PYPTO_AST_HOST_THREADS", 0)
    """Threads the host backend runs a launch's blocks on; 0 = one per core (capped by blocks)."""

    host_cube = _choice("PYPTO_AST_HOST_CUBE", "auto", HOST_CUBE_ISAS)
    """Register blocks of the host backend's Mmad: ``auto`` (the best this CPU has), ``avx512``,
    ``avx2`` or ``baseline``; the results are the same bits whichever (for tests and timings)."""

    host_fuse = _choice("PYPTO_AST_HOST_FUSE", "on", ("on", "off")) == "on"
    """Run each emitted run of fp32 count-form elementwise ops as one pass over UB (the
    ``PYPTO_HOST_FUSE`` branch of the Ascend C, docs/design.md §34); ``off`` runs the Ascend C
    calls one by one.  The same bits either way (for tests and timings)."""

    ascend_driver = Path(_text("PYPTO_AST_ASCEND_DRIVER", "/usr/local/Ascend/driver")).expanduser()
    """The Ascend driver's install directory, whose ``version.info`` the doctor reads."""


cache_dir: Path
always_compile: bool
dump: bool
backtrace: bool
backend: str
cxx: str
ascend_driver: Path
host_threads: int
host_cube: str
host_fuse: bool

reload()
