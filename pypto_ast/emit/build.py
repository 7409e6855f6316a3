"""Build C++ sources with g++ through a content-addressed cache, and load the result.

The host backend compiles emitted Ascend C against our CPU implementation of the API, then
loads it with ctypes.  Builds are cached under a key made only of contents (conventions C2):
each source's name and text, the flags in order, the compiler's ``--version`` text, a content
hash of every file under the include dirs, the key of any prebuilt objects linked in, and the
cache format version.  Entries are written atomically (C3): built in a private sibling
directory, then renamed into place, so readers never see half an entry and racing builders
agree.  Every artefact's sha256 is recorded in the entry and checked before it is used, so a
truncated, replaced or edited library is rebuilt, never loaded.

Translation units compile in parallel (one g++ per file, as many at once as there are cores)
and are linked in a separate step; :class:`Objects` are object files built once into the cache
and linked into every library that names them (the host runtime, ``host_runtime.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence

from .. import knobs

FORMAT_VERSION = 2
"""Bump when the entry layout or the key changes: old entries then live in another ``v<N>``."""

BASE_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-pthread")
"""Flags of every translation unit; callers add their own (the runtime adds -O3 and more)."""
LIBRARY = "lib.so"
META = "meta.json"
_COMPILED = (".cpp", ".cc", ".cxx", ".c")

Progress = Optional[Callable[[str], None]]
"""Where build progress lines go (``None``: nowhere); the CLI passes a stderr printer."""


class BuildError(Exception):
    """The compiler failed or could not run; ``stderr`` is its own output, file:line intact."""

    def __init__(self, message: str, *, stderr: str = "", command: tuple[str, ...] = ()):
        super().__init__(message)
        self.message, self.stderr, self.command = message, stderr, command

    def __str__(self) -> str:
        return f"{self.message}\n{self.stderr.rstrip()}" if self.stderr.strip() else self.message


class Objects:
    """Object files compiled once per compiler, flags and header contents, then linked into
    libraries.  ``digest()`` is their cache key, cheap to compute (no compiler runs on a hit);
    ``paths()`` builds them on first use and checks their recorded hashes every time."""

    def __init__(self, sources: Mapping[str, str], *, include_dirs: Iterable[str | os.PathLike] = (),
                 flags: Iterable[str] = (), label: str = "objects"):
        _check_names(sources)
        self.sources = dict(sources)
        self.source_hashes = _source_hashes(self.sources)  # once: the digest is taken on every build
        self.include_dirs = [Path(d).resolve() for d in include_dirs]
        self.flags = (*BASE_FLAGS, *flags)
        self.label = label

    def digest(self, cxx: str | None = None) -> str:
        compiler = _find_compiler(cxx or knobs.cxx)
        return _digest(_key_inputs(self.source_hashes, self.flags, compiler, self.include_dirs, ()))

    def paths(self, *, cache_dir=None, cxx: str | None = None, progress: Progress = None) -> list[Path]:
        compiler = _find_compiler(cxx or knobs.cxx)
        inputs = _key_inputs(self.source_hashes, self.flags, compiler, self.include_dirs, ())
        digest = _digest(inputs)
        names = [_object_name(n) for n in _compiled(self.sources)]
        entry = _cache_root(cache_dir) / f"obj-{digest}"
        if _entry_is_valid(entry, digest):
            return [entry / n for n in names]
        if (entry / META).exists():
            _warn_damaged(entry, progress)
        if progress:
            progress(f"building {self.label} once for this compiler: {len(names)} files "
                     f"({Path(compiler).name} {_opt_level(self.flags)}) ...")

        def make(tmp: Path) -> list[str]:
            _compile_all(tmp, self.sources, compiler, self.flags, self.include_dirs)
            return names

        _build_entry(entry, digest, inputs, make, replace=False)
        return [entry / n for n in names]


def build_host_library(
    sources: Mapping[str, str],
    *,
    include_dirs: Iterable[str | os.PathLike] = (),
    extra_flags: Iterable[str] = (),
    link: Optional[Objects] = None,
    cache_dir: str | os.PathLike | None = None,
    always_compile: bool | None = None,
    no_cache: bool = False,
    cxx: str | None = None,
    progress: Progress = None,
) -> Path:
    """Return the path of a shared library built from ``sources`` ({file name: text}).

    Files ending in .cpp/.cc/.cxx/.c are compiled (in parallel), then linked with ``link``'s
    objects; the others (headers) are only written next to them.  ``cache_dir``,
    ``always_compile`` and ``cxx`` default to the knobs.  With ``no_cache`` the library is
    built in a fresh temporary directory and the cache is neither read nor written (``link``'s
    objects still come from it).  Raises :class:`BuildError` with the compiler's stderr.
    """
    _check_names(sources)
    compiler = _find_compiler(cxx or knobs.cxx)
    includes = [Path(d).resolve() for d in include_dirs]
    flags = (*BASE_FLAGS, *extra_flags)
    linked = (link.digest(compiler),) if link is not None else ()
    inputs = _key_inputs(_source_hashes(sources), flags, compiler, includes, linked)
    digest = _digest(inputs)

    def make(tmp: Path) -> list[str]:
        objects = link.paths(cache_dir=cache_dir, cxx=compiler, progress=progress) if link is not None else []
        units = _compiled(sources)
        if progress:
            progress(f"compiling {len(units)} file{'s' if len(units) != 1 else ''} "
                     f"({Path(compiler).name} {_opt_level(flags)}) ...")
        _compile_all(tmp, sources, compiler, flags, includes)
        own = [tmp / _object_name(n) for n in units]
        _link(tmp, own + list(objects), compiler, flags)
        for o in own:  # linked in: only the library and the sources stay in the entry
            o.unlink()
        return [LIBRARY]

    if no_cache:
        with _sigterm_cleans_up():
            out = Path(tempfile.mkdtemp(prefix="pypto-ast-build-"))
            try:
                make(out)
            except BaseException:
                shutil.rmtree(out, ignore_errors=True)
                raise
        return out / LIBRARY  # the caller owns (and may delete) this directory

    entry = _cache_root(cache_dir) / digest
    always = knobs.always_compile if always_compile is None else always_compile
    if not always and _entry_is_valid(entry, digest):
        return entry / LIBRARY
    if not always and (entry / META).exists():
        _warn_damaged(entry, progress)
    _build_entry(entry, digest, inputs, make, replace=always)
    return entry / LIBRARY


def cached_library(digest: str, *, cache_dir: str | os.PathLike | None = None) -> Optional[Path]:
    """The library of the cache entry named ``digest`` when that entry is valid (its meta.json
    matches its name and every artefact has the sha256 it was published with), else None.
    Never builds: for callers that keep the digest of a library they built before."""
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        return None
    entry = _cache_root(cache_dir) / digest
    return entry / LIBRARY if _entry_is_valid(entry, digest) else None


def load_library(path: str | os.PathLike) -> ctypes.CDLL:
    """Load a built library; the caller sets ``argtypes``/``restype`` on its functions.

    A library built against the host kernel_operator.h gets ``knobs.host_threads`` and
    ``knobs.host_cube`` and ``knobs.host_fuse`` (read now, so assigning the attributes takes effect
    on the next load) through its ``pypto_host_set_threads``, ``pypto_host_set_cube`` and
    ``pypto_host_set_fuse`` entry points.
    """
    lib = ctypes.CDLL(str(path))
    try:
        set_threads = lib.pypto_host_set_threads
    except AttributeError:
        return lib  # not a host-runtime library
    set_threads.argtypes = [ctypes.c_int]
    set_threads.restype = None
    set_threads(int(knobs.host_threads))
    set_cube = lib.pypto_host_set_cube
    set_cube.argtypes = [ctypes.c_int]
    set_cube.restype = None
    set_cube(knobs.HOST_CUBE_ISAS.index(knobs.host_cube) - 1)
    set_fuse = lib.pypto_host_set_fuse
    set_fuse.argtypes = [ctypes.c_int]
    set_fuse.restype = None
    set_fuse(int(bool(knobs.host_fuse)))
    return lib


# ---- names, compiler, key -------------------------------------------------------------------

def _check_names(sources: Mapping[str, str]) -> None:
    # Names become files in the build dir and part of the key: keep them plain and unambiguous.
    if not any(n.endswith(_COMPILED) for n in sources):
        raise BuildError(f"nothing to compile: no {'/'.join(_COMPILED)} file among {sorted(sources)}")
    for name in sources:
        if not name or "/" in name or "\\" in name or name in (".", "..", LIBRARY, META):
            raise BuildError(f"bad source file name {name!r}: use a plain file name")


def _compiled(sources: Mapping[str, str]) -> list[str]:
    return sorted(n for n in sources if n.endswith(_COMPILED))


def _object_name(source: str) -> str:
    return source + ".o"  # add.cpp -> add.cpp.o: distinct from any other source's object


def _opt_level(flags: Sequence[str]) -> str:
    levels = [f for f in flags if f.startswith("-O")]
    return levels[-1] if levels else "-O0"


def _find_compiler(cxx: str) -> str:
    return _which(cxx, os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=64)
def _which(cxx: str, _path: str) -> str:
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


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=4096)
def _content_sha256(path: str, _ino: int, _size: int, _mtime_ns: int) -> str:
    """sha256 of a file, remembered while its inode, size and mtime stay the same."""
    with open(path, "rb") as f:
        return _sha256(f.read())


def _header_hashes(includes: list[Path]) -> dict[str, str]:
    """Content hash of every file under each include dir, keyed ``<index>:<relative path>``
    (os.walk, not pathlib: this runs on every cache hit)."""
    hashes = {}
    for index, top in enumerate(includes):
        if not top.is_dir():
            raise BuildError(f"include directory not found: {top}")
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = os.path.relpath(root, top)
            for name in files:
                path = os.path.join(root, name)
                st = os.stat(path)
                key = name if rel == "." else f"{rel.replace(os.sep, '/')}/{name}"
                hashes[f"{index}:{key}"] = _content_sha256(path, st.st_ino, st.st_size, st.st_mtime_ns)
    return dict(sorted(hashes.items()))


def _source_hashes(sources: Mapping[str, str]) -> dict[str, str]:
    return {name: _sha256(text.encode()) for name, text in sorted(sources.items())}


def _key_inputs(source_hashes: dict[str, str], flags: tuple[str, ...], compiler: str,
                includes: list[Path], linked: tuple[str, ...]) -> dict:
    """Everything the key covers, in a form small enough to keep in meta.json."""
    return {
        "format": FORMAT_VERSION,
        "sources": source_hashes,
        "flags": list(flags),  # in order: -D then -U differs from -U then -D
        "compiler": _compiler_version(compiler),
        "headers": _header_hashes(includes),
        "linked": list(linked),
    }


def _digest(inputs: dict) -> str:
    return _sha256(json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode())


# ---- compiling ------------------------------------------------------------------------------

def _compile_all(out: Path, sources: Mapping[str, str], compiler: str, flags: tuple[str, ...],
                 includes: list[Path]) -> None:
    """Write the sources into ``out`` and compile each to an object there, as many at once
    as there are cores; the first failure (in file order) is raised with its stderr."""
    for name, text in sources.items():
        (out / name).write_text(text)
    units = _compiled(sources)
    commands = [(compiler, *flags, *(f"-I{d}" for d in includes), "-c", n, "-o", _object_name(n)) for n in units]
    width = max(1, min(len(commands), os.cpu_count() or 1))
    failures = []
    running: list[tuple[tuple[str, ...], subprocess.Popen]] = []
    pending = list(commands)
    try:
        while pending or running:
            while pending and len(running) < width:
                cmd = pending.pop(0)
                # cwd=out and relative names: diagnostics read "add.cpp:3:5: error: ...".
                with _sigterm_deferred():  # a compiler started is a compiler listed, to be killed
                    running.append((cmd, subprocess.Popen(cmd, cwd=out, stdout=subprocess.DEVNULL,
                                                          stderr=subprocess.PIPE, text=True)))
            cmd, proc = running[0]  # still listed while we wait: an interrupt kills it too
            _, err = proc.communicate()
            running.pop(0)
            if proc.returncode != 0:
                failures.append((cmd, proc.returncode, err))
    except OSError as exc:
        raise BuildError(f"cannot run {compiler}: {exc}", command=commands[0]) from None
    finally:
        for _, proc in running:
            proc.kill()
            proc.wait()
    if failures:
        cmd, code, err = min(failures, key=lambda f: units.index(f[0][-3]))
        raise BuildError(f"compiling {cmd[-3]} failed (exit {code})", stderr=err, command=cmd)


def _link(out: Path, objects: list[Path], compiler: str, flags: tuple[str, ...]) -> None:
    command = (compiler, *(f for f in flags if not f.startswith("-O")), "-shared",
               *(str(o) for o in objects), "-o", LIBRARY)
    try:
        proc = subprocess.run(command, cwd=out, capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"cannot run {command[0]}: {exc}", command=command) from None
    if proc.returncode != 0 or not (out / LIBRARY).is_file():
        raise BuildError(f"linking {LIBRARY} failed (exit {proc.returncode})", stderr=proc.stderr, command=command)


# ---- the cache ------------------------------------------------------------------------------

def _cache_root(cache_dir) -> Path:
    """``<cache_dir>/v<N>``, created private (0700); a cache someone else could write to is
    refused, since a library found there would be loaded into this process."""
    top = Path(cache_dir if cache_dir is not None else knobs.cache_dir).expanduser()
    root = top / f"v{FORMAT_VERSION}"
    for d in (top, root):
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = d.stat()
        except OSError as exc:
            raise BuildError(f"cannot use the build cache {d}: {exc.strerror or exc}") from None
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise BuildError(f"the build cache {d} belongs to another user (uid {st.st_uid}); "
                             "set PYPTO_AST_CACHE_DIR to a directory of your own")
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise BuildError(f"the build cache {d} is writable by group or others (mode "
                             f"{stat.S_IMODE(st.st_mode):o}); make it private (chmod 700) or set "
                             "PYPTO_AST_CACHE_DIR")
    if stat.S_IMODE(root.stat().st_mode) & 0o077:
        # ours (checked above) but readable by others, e.g. made under an older umask: make it private
        try:
            os.chmod(root, 0o700)
        except OSError:
            pass
    return root


class DamagedCacheWarning(UserWarning):
    """A build cache entry whose files no longer match their recorded digests: rebuilt, never loaded."""


def _warn_damaged(entry: Path, progress: Progress) -> None:
    message = (f"build cache entry {entry.name[:16]}... does not match its recorded digests "
               "(changed, truncated or replaced); rebuilding it, the old files are not loaded")
    if progress:
        progress("warning: " + message)
    else:
        import warnings

        warnings.warn(message, DamagedCacheWarning, stacklevel=3)


def _entry_is_valid(entry: Path, digest: str) -> bool:
    """A hit needs a meta.json whose digest matches both the entry's name and its recorded
    inputs, and every artefact it lists with the sha256 it was published with."""
    try:
        meta = json.loads((entry / META).read_text())
        if meta["digest"] != digest or _digest(meta["inputs"]) != digest or not meta["files"]:
            return False
        return all(_file_sha256(entry / name) == sha for name, sha in meta["files"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _build_entry(entry: Path, digest: str, inputs: dict, make: Callable[[Path], list[str]], replace: bool) -> None:
    """Run ``make`` in a private temporary sibling of ``entry``, record the artefacts it
    returns with their hashes, and publish the directory atomically."""
    _sweep_stale(entry.parent)
    with _sigterm_cleans_up():
        tmp = entry.with_name(f"{entry.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            tmp.mkdir(mode=0o700)
            artefacts = make(tmp)
            meta = {"digest": digest, "inputs": inputs,
                    "files": {name: _file_sha256(tmp / name) for name in artefacts}}
            (tmp / META).write_text(json.dumps(meta, indent=1, sort_keys=True))
            _publish(tmp, entry, digest, replace=replace)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class _Terminated(BaseException):
    """SIGTERM arrived during a build: unwinds it (its ``finally`` blocks remove the temporary
    directory and kill the compilers) like Ctrl-C's KeyboardInterrupt, then the signal is
    delivered again."""


class _Deferral:
    depth = 0
    pending = False


_deferral = _Deferral()


@contextlib.contextmanager
def _sigterm_deferred():
    """SIGTERM (under :func:`_sigterm_cleans_up`'s handler) waits until the block has run: a
    compiler's Popen can return after the compiler already started, and unwinding inside it
    would leave that compiler running, unlisted.  The signal is acted on at the block's end."""
    _deferral.depth += 1
    try:
        yield
    finally:
        _deferral.depth -= 1
        if not _deferral.depth and _deferral.pending:  # termination wins over an error in the block
            _deferral.pending = False
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            raise _Terminated()  # the signal that arrived during the block


@contextlib.contextmanager
def _sigterm_cleans_up():
    """During a build, SIGTERM cleans up before it kills the process.

    Its default action ends the process at once, leaving a half-built ``*.tmp-<pid>-*``
    directory in the cache and the compilers running.  Where that default is in effect (and
    we can set handlers: the main thread), SIGTERM raises :class:`_Terminated` instead; once
    the build has unwound, the default is restored and the signal sent again, so the process
    still dies of SIGTERM (exit status -15 to its parent).  A program that handles or ignores
    SIGTERM itself keeps its own handling; a nested build leaves it to the outermost."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        if _deferral.depth:  # inside Popen: its child may already run, and is not listed yet
            _deferral.pending = True
            return
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        raise _Terminated()

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise  # not reached: the signal ends the process
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


_TEMPORARY = re.compile(r"(?:obj-)?[0-9a-f]{64}\.(?:tmp|old)-(\d+)-[0-9a-f]{8}")
STALE_AFTER = 300.0
"""Seconds a dead process's temporary directory is left before a build removes it.  A pid we
cannot see may belong to a live builder in another pid namespace or on another machine sharing
the cache; a live builder's directory changes at least once per compiled file."""


def _sweep_stale(root: Path) -> None:
    """Remove the ``*.tmp-<pid>-*`` / ``*.old-<pid>-*`` directories of builds whose process is
    gone (killed by SIGKILL, or by a signal during cleanup): ours (uid), real directories (a
    symlink is never followed nor removed), untouched for :data:`STALE_AFTER` seconds, and whose
    pid is no live process.  Runs on a cache miss only, before building: one directory listing."""
    now = time.time()
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        listing = list(os.scandir(root))
    except OSError:
        return
    for item in listing:
        match = _TEMPORARY.fullmatch(item.name)
        if match is None or _process_alive(int(match.group(1))):
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid) or now - st.st_mtime < STALE_AFTER:
            continue
        shutil.rmtree(item.path, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of ours may be building
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process (EPERM), or no pid we can ask about: keep its files
    return True


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
