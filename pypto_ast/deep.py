"""Run work on deeply nested input where CPython's recursion cannot crash it.

``ast.parse`` and every tree walk written as recursion (the front end's evaluator, libcst's
visitors, ``repr``/``==``/``hash`` of nested values) recurse once or a few times per level of
nesting.  The default recursion limit (1000) stops a 500-term ``a + a + ... + a`` chain, and
raising it on the calling thread risks overflowing that thread's C stack (8 MiB on the main
thread) -- a segfault instead of an exception.  ``call(fn, ...)`` therefore runs ``fn`` on a
worker thread whose stack is ``STACK_BYTES`` and with the recursion limit raised to
``RECURSION_LIMIT`` while any such call runs (CPython's limit is per interpreter, not per
thread: it is restored when the last call ends).  The caller's thread only waits.

Sizing (CPython 3.11, measured): recursion through C slots (``==`` / ``hash`` of nested
dataclasses, properties, ``map``) takes 0.5-0.7 KiB of C stack per level, ``ast.parse`` about
0.2 KiB per level (its limit is three times the recursion limit); pure Python calls take none.
200 000 levels therefore need at most ~140 MiB of the 512 MiB stack.  A ``RecursionError``
still raised at that depth is an ordinary exception for the caller to report.

Nested calls (``call`` inside ``call``) run inline on the worker.  When no thread can be
started (a platform limit) ``fn`` runs inline with the limit untouched.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

STACK_BYTES = 512 << 20
RECURSION_LIMIT = 200_000

_lock = threading.Lock()
_active = 0
_saved_limit = 0
_local = threading.local()


def in_worker() -> bool:
    """Whether the current thread is one of ``call``'s workers."""
    return getattr(_local, "deep", False)


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on a big-stack worker thread; its result or its exception."""
    if in_worker():
        return fn(*args, **kwargs)
    box: dict = {}

    def run() -> None:
        _local.deep = True
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            box["error"] = exc

    thread = _start(run)
    if thread is None:
        return fn(*args, **kwargs)
    try:
        thread.join()
    finally:
        _leave()
    if "error" in box:
        error = box.pop("error")
        try:
            raise error
        finally:
            del error
    return box["value"]


def _start(run: Callable[[], None]):
    """Start the worker with the big stack and the raised limit; None when no thread starts."""
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1
        thread = None
        try:
            old_size = threading.stack_size()
            try:
                threading.stack_size(STACK_BYTES)
            except (ValueError, RuntimeError):  # the platform refuses this size: keep its default
                pass
            try:
                thread = threading.Thread(target=run, name="pypto-ast-deep", daemon=True)
                thread.start()
            finally:
                threading.stack_size(old_size)
        except (RuntimeError, MemoryError):  # "can't start new thread"
            thread = None
        if thread is None:
            _active -= 1
            if _active == 0:
                sys.setrecursionlimit(_saved_limit)
        return thread


def _leave() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)
