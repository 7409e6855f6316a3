"""Build C++ sources into a shared library with g++, through a content-addressed cache.

The host backend compiles emitted Ascend C against our CPU implementation of the API, then
loads it with ctypes.  Compiling costs seconds, so builds are cached under a key made only
of contents (conventions C2): each source's name and text, the flags in order, the compiler's
``--version`` text, a content hash of every file under the include dirs, and the cache
format version.  Entries are written atomically (C3): built in a private sibling directory,
then renamed into place, so readers never see half an entry and racing builders agree.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

from .. import knobs

FORMAT_VERSION = 1
"""Bump when the entry layout or the key changes: old entries then live in another ``v<N>``."""

BASE_FLAGS = ("-std=c++17", "-O3", "-fno-math-errno", "-fno-trapping-math", "-fPIC", "-shared", "-pthread")
"""-O3 vectorises the host runtime's chunk loops; -fno-math-errno / -fno-trapping-math let
sqrt and compare-and-select loops vectorise too (no result changes: IEEE rounding is kept, no
-ffast-math).  No -march: the library stays portable (the runtime header picks AVX2 code at
load time itself).  -pthread: pypto_host::Launch runs blocks on std::threads."""
LIBRARY = "lib.so"
META = "meta.json"
_COMPILED = (".cpp", ".cc", ".cxx", ".c")


class BuildError(Exception):
    """The compiler failed or could not run; ``stderr`` is its own output, file:line intact."""

    def __init__(self, message: str, *, stderr: str = "", command: tuple[str, ...] = ()):
        super().__init__(message)
        self.message, self.stderr, self.command = message, stderr, command

    def __str__(self) -> str:
        return f"{self.message}\n{self.stderr.rstrip()}" if self.stderr.strip() else self.message


def build_host_library(
    sources: Mapping[str, str],
    *,
    include_dirs: Iterable[str | os.PathLike] = (),
    extra_flags: Iterable[str] = (),
    cache_dir: str | os.PathLike | None = None,
    always_compile: bool | None = None,
    no_cache: bool = False,
    cxx: str | None = None,
) -> Path:
    """Return the path of a shared library built from ``sources`` ({file name: text}).

    Files ending in .cpp/.cc/.cxx/.c are compiled; the others (headers) are only written next
    to them.  ``cache_dir``, ``always_compile`` and ``cxx`` default to the knobs.  With
    ``no_cache`` the library is built in a fresh temporary directory and the cache is neither
    read nor written.  Raises :class:`BuildError` with the compiler's stderr on failure.
    """
    _check_names(sources)
    compiler = _find_compiler(cxx or knobs.cxx)
    includes = [Path(d).resolve() for d in include_dirs]
    flags = (*BASE_FLAGS, *extra_flags)
    inputs = _key_inputs(sources, flags, compiler, includes)
    digest = _digest(inputs)
    command = (compiler, *flags, *(f"-I{d}" for d in includes),
               *(n for n in sorted(sources) if n.endswith(_COMPILED)), "-o", LIBRARY)

    if no_cache:
        out = Path(tempfile.mkdtemp(prefix="pypto-ast-build-"))
        try:
            _compile(out, sources, command, inputs, digest)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
        return out / LIBRARY  # the caller owns (and may delete) this directory

    root = Path(cache_dir if cache_dir is not None else knobs.cache_dir).expanduser() / f"v{FORMAT_VERSION}"
    entry = root / digest
    always = knobs.always_compile if always_compile is None else always_compile
    if not always and _entry_is_valid(entry, digest):
        return entry / LIBRARY

    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f"{digest}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        tmp.mkdir()
        _compile(tmp, sources, command, inputs, digest)
        _publish(tmp, entry, digest, replace=always)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return entry / LIBRARY


def load_library(path: str | os.PathLike) -> ctypes.CDLL:
    """Load a built library; the caller sets ``argtypes``/``restype`` on its functions.

    A library built against the host kernel_operator.h gets ``knobs.host_threads`` (read now,
    so assigning the attribute takes effect on the next load) through its
    ``pypto_host_set_threads`` entry point.
    """
    lib = ctypes.CDLL(str(path))
    try:
        set_threads = lib.pypto_host_set_threads
    except AttributeError:
        return lib  # not a host-runtime library
    set_threads.argtypes = [ctypes.c_int]
    set_threads.restype = None
    set_threads(int(knobs.host_threads))
    return lib


def _check_names(sources: Mapping[str, str]) -> None:
    # Names become files in the build dir and part of the key: keep them plain and unambiguous.
    if not any(n.endswith(_COMPILED) for n in sources):
        raise BuildError(f"nothing to compile: no {'/'.join(_COMPILED)} file among {sorted(sources)}")
    for name in sources:
        if not name or "/" in name or "\\" in name or name in (".", "..", LIBRARY, META):
            raise BuildError(f"bad source file name {name!r}: use a plain file name")


def _find_compiler(cxx: str) -> str:
    found = shutil.which(cxx)
    if found is None:
        raise BuildError(f"C++ compiler {cxx!r} not found (set PYPTO_AST_CXX to another one)")
    return os.path.realpath(found)


def _compiler_version(compiler: str) -> str:
    # Memoised on the binary's identity so a cache hit runs no process at all.
    st = os.stat(compiler)
    return _version_of(compiler, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=None)
def _version_of(compiler: str, _mtime_ns: int, _size: int) -> str:
    try:
        proc = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"cannot run {compiler} --version: {exc}") from None
    if proc.returncode != 0:
        raise BuildError(f"{compiler} --version failed", stderr=proc.stderr)
    return proc.stdout


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _header_hashes(includes: list[Path]) -> dict[str, str]:
    """Content hash of every file under each include dir, keyed ``<index>:<relative path>``."""
    hashes = {}
    for index, top in enumerate(includes):
        if not top.is_dir():
            raise BuildError(f"include directory not found: {top}")
        for path in sorted(p for p in top.rglob("*") if p.is_file()):
            hashes[f"{index}:{path.relative_to(top).as_posix()}"] = _sha256(path.read_bytes())
    return hashes


def _key_inputs(sources: Mapping[str, str], flags: tuple[str, ...], compiler: str,
                includes: list[Path]) -> dict:
    """Everything the key covers, in a form small enough to keep in meta.json."""
    return {
        "format": FORMAT_VERSION,
        "sources": {name: _sha256(text.encode()) for name, text in sorted(sources.items())},
        "flags": list(flags),  # in order: -D then -U differs from -U then -D
        "compiler": _compiler_version(compiler),
        "headers": _header_hashes(includes),
    }


def _digest(inputs: dict) -> str:
    return _sha256(json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode())


def _compile(out: Path, sources: Mapping[str, str], command: tuple[str, ...], inputs: dict,
             digest: str) -> None:
    """Write the sources into ``out``, compile there, then write meta.json last."""
    for name, text in sources.items():
        (out / name).write_text(text)
    try:
        # cwd=out and relative names: diagnostics read "add.cpp:3:5: error: ...".
        proc = subprocess.run(command, cwd=out, capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"cannot run {command[0]}: {exc}", command=command) from None
    if proc.returncode != 0 or not (out / LIBRARY).is_file():
        raise BuildError(f"compiling {', '.join(sorted(sources))} failed (exit {proc.returncode})",
                         stderr=proc.stderr, command=command)
    meta = {"digest": digest, "inputs": inputs, "command": list(command)}
    (out / META).write_text(json.dumps(meta, indent=1, sort_keys=True))


def _entry_is_valid(entry: Path, digest: str) -> bool:
    """A hit needs the library and a meta.json whose digest matches both its name and inputs."""
    try:
        meta = json.loads((entry / META).read_text())
        return (meta["digest"] == digest and _digest(meta["inputs"]) == digest
                and (entry / LIBRARY).is_file())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _publish(tmp: Path, entry: Path, digest: str, replace: bool) -> None:
    """Rename ``tmp`` to ``entry``; keep a valid entry another process put there first.

    ``replace`` (always-compile) moves an existing valid entry aside once; after that a
    valid entry that appears is some other fresh build, equally good.
    """
    for attempt in range(3):
        try:
            os.rename(tmp, entry)
            return
        except OSError:  # ENOTEMPTY/EEXIST: an entry is already there
            pass
        if _entry_is_valid(entry, digest) and not (replace and attempt == 0):
            return
        # Corrupt, or to be replaced: move it aside atomically, delete it, retry.
        aside = entry.with_name(f"{entry.name}.old-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.rename(entry, aside)
        except OSError:
            pass  # someone else moved it already
        shutil.rmtree(aside, ignore_errors=True)
    raise BuildError(f"could not publish cache entry {entry}")
