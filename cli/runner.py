"""The file loop behind ``pypto-lint``: read, lint, maybe fix, maybe write — one Report per file.

Nothing here raises past a file: read/write failures and crashes become fields of the
Report (or a PTO999 diagnostic), so one bad file never hides the others' findings and the
same values pickle back from pool workers.  The engine and the fixer are imported inside
the functions, so importing this module (``pypto-lint --version``) stays cheap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Sequence

from pypto_ast.diagnostics import Diagnostic, Pos, Severity, Span
from pypto_ast.files import ReadOnlyFileError, StaleFileError, encode_text, write_atomic
from pypto_ast.render import unified_diff
from pypto_ast.settings import Settings

if TYPE_CHECKING:
    from pypto_ast.analysis.engine import FileResult

POOL_THRESHOLD = 16  # below this, forking costs more than it saves


@dataclass(frozen=True)
class Mode:
    fix: bool = False  # apply fixes
    diff: bool = False  # compute fixes and diff them, write nothing
    unsafe: bool = False  # also apply UNSAFE fixes

    @property
    def fixing(self) -> bool:
        return self.fix or self.diff


@dataclass(frozen=True)
class Report:
    path: str
    result: "FileResult | None" = None  # None only when the file could not be read
    fixed: int = 0  # fixes applied (written, or that --diff would write)
    changed: bool = False  # the file on disk was rewritten
    diff: str = ""
    fixed_bytes: bytes | None = None  # stdin with --fix/--diff: the fixed source
    error: str | None = None  # could not read or write: exit 2
    warning: str | None = None  # worth telling, not an error (stale file, no convergence)


def lint_path(path: str, settings: Settings, mode: Mode) -> Report:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return Report(path, error=f"{path}: cannot read: {exc.strerror or exc}")
    report = lint_data(data, path, settings, mode, write=mode.fix and not mode.diff)
    return dataclasses.replace(report, fixed_bytes=None)  # only stdin needs them; don't pickle them back


def lint_data(data: bytes, path: str, settings: Settings, mode: Mode, *, write: bool = False) -> Report:
    """Lint ``data`` (shown as ``path``); with ``mode.fixing`` also fix it, and when ``write``
    store the fix in ``path`` atomically."""
    from pypto_ast.analysis import engine

    result = engine.lint_bytes(data, path, settings)
    if not mode.fixing and any(d.fix_applies(False) for d in result.diagnostics):
        from pypto_ast.transforms.fixer import proven

        try:
            result = proven(result)  # "fixable with --fix" only for fixes lowering proves safe
        except Exception:  # noqa: BLE001 - a proof that crashes leaves the fix offered as it was
            pass
    if not mode.fixing or result.text is None or not any(d.fix_applies(mode.unsafe) for d in result.diagnostics):
        return Report(path, result, fixed_bytes=data if mode.fixing else None)
    try:
        from pypto_ast.transforms.fixer import fix_text

        outcome = fix_text(result.text, path, settings, unsafe=mode.unsafe)
    except Exception:
        failure = traceback.format_exc()
        bug = internal_error(path, "applying fixes crashed on this file")
        broken = dataclasses.replace(result, diagnostics=result.diagnostics + (bug,), failure=failure)
        return Report(path, broken, fixed_bytes=data)
    warning = None if outcome.converged else f"{path}: fixes did not converge; the result may still be fixable"
    if outcome.text == result.text:
        return Report(path, outcome.result, fixed_bytes=data, warning=warning)
    try:
        new_bytes = encode_text(outcome.text, result.encoding, data)
    except UnicodeEncodeError as exc:
        error = f"{path}: fixed text is not encodable as {result.encoding}: {exc.reason}; not written"
        return Report(path, result, fixed_bytes=data, error=error)
    diff = unified_diff(result.text, outcome.text, path) if mode.diff else ""
    if write:
        try:
            write_atomic(path, new_bytes, data)
        except ReadOnlyFileError as exc:  # refused, like any file we cannot write: exit 2
            return Report(path, result, error=str(exc))
        except StaleFileError as exc:
            return Report(path, result, warning=str(exc))
        except OSError as exc:
            return Report(path, result, error=f"{path}: cannot write: {exc.strerror or exc}")
    return Report(
        path, outcome.result, fixed=outcome.applied, changed=write, diff=diff,
        fixed_bytes=new_bytes, warning=warning,
    )


def internal_error(path: str, message: str) -> Diagnostic:
    span = Span(path, Pos(1, 0), Pos(1, 0))
    return Diagnostic(
        "PTO999", "internal-error", f"{message}; this is a pypto-ast bug, please report it",
        span, Severity.BUG,
    )


def lint_paths(paths: Sequence[str], settings: Settings, mode: Mode, *, jobs: int | None = None) -> list[Report]:
    """Lint every path, in a fork pool when there are many; reports come back in path order."""
    work = partial(lint_path, settings=settings, mode=mode)
    workers = min(jobs or os.cpu_count() or 1, len(paths))
    if len(paths) <= POOL_THRESHOLD or workers < 2:
        return [work(p) for p in paths]
    import multiprocessing  # only for many files: keeps one-file start-up cheap

    if "fork" not in multiprocessing.get_all_start_methods():
        return [work(p) for p in paths]
    chunksize = max(1, len(paths) // (workers * 4))
    with _signals_held() as release:
        try:
            pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_init,
                                                            initargs=(os.getpid(),))
        except AssertionError:  # "daemonic processes are not allowed to have children"
            pool = None
        if pool is None:
            release()
            return [work(p) for p in paths]
        with pool, _sigterm_exits():  # leaving the block (also by Ctrl-C) terminates the workers
            release()  # a Ctrl-C that came while the pool was starting is raised here, in the block
            return list(pool.imap(work, paths, chunksize))


_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _signals_held():
    """Hold Ctrl-C and SIGTERM while the pool starts; ``release()`` lets them in.

    A signal that lands while ``Pool()`` is forking would leave it half-built (its workers
    running with no one to end them) or reach a worker before ``_worker_init`` set it up.
    Held, it waits: the pool's own threads and workers start with it blocked (they inherit
    the mask), the workers unblock it once their handlers are set, and the parent takes it
    inside the pool's ``with`` block, whose exit terminates the workers."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield lambda: None
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    state = {"held": True}

    def release() -> None:
        if state["held"]:
            state["held"] = False
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    try:
        yield release
    finally:
        release()


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _worker_init(parent: int) -> None:
    """Make a pool worker die with pypto-lint: a killed run must not go on linting or
    writing fixes in the background.  The parent ends the pool on Ctrl-C and SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C signals the whole group; no tracebacks
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # pool.terminate() sends it; don't inherit ours
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)  # held by the parent while it forked us
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # covers SIGKILL too
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


@contextlib.contextmanager
def _sigterm_exits():
    """SIGTERM raises SystemExit(143) so the pool's ``with`` terminates the workers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
