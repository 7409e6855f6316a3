"""PTO114: a failed test whose kernel rounded values that sit on a tie between two integers.

A quantizing kernel (fp32 -> int8 through ``cast(..., CAST_RINT)``) turns a value such as
63.500004 into 64, while the torch golden, whose fp32 sums ran in another order, held 63.49999
and gave 63.  One integer step is then an error far larger than any tolerance of what is computed
from the integers: a matmul over a quantized row moves every output of that row.  Neither result
is wrong; the inputs put a value within a few fp32 steps of ``n + 0.5``, where the order of an fp32
sum decides.  When such a test fails, the drop-in says so at the line of the cast, with the count
and the first value, so that the user can tell it from a wrong kernel.

Both backends record (``record``): the interpreter per cast op with its span, the host runtime per
launch (its casts' spans from the IR).  The pytest plugin and ``python -m pypto_ast.dropin`` take
the records of the test that failed (``take``) and render them.  Nothing is changed: the test still
fails (docs/design.md, "Rounding ties").  No torch or numpy here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional

from .diagnostics import Diagnostic, Pos, Severity, Span

CODE = "PTO114"
# How close to n + 0.5, in steps of fp32 at the value: the spread of fp32 sums of a few thousand
# terms in two orders after a normalisation (measured on the official models: 1 to 6 steps).
ULPS = 8


@dataclass
class Ties:
    """``count`` values of ``total`` rounded by the cast at ``span`` lay within ``ULPS`` fp32 steps of
    a tie; the first was ``value``, rounded to ``rounded``."""

    span: Optional[object]  # an ir.Span or its (line, col, end line, end col); None: not known
    count: int
    total: int
    value: float
    rounded: float
    backend: str = "interp"
    path: Optional[str] = None  # the kernel's source file, set by ``locate`` after the call


_lock = threading.Lock()
_records: list = []


def record(ties: Ties) -> None:
    """Note ties seen by a cast (or a host launch); merged with an earlier record of the same span."""
    with _lock:
        for r in _records:
            if r.span == ties.span and r.backend == ties.backend and r.path is None:
                r.count += ties.count
                r.total += ties.total
                return
        _records.append(ties)


def locate(path: str) -> None:
    """Give the records of the kernel call that just ended the kernel's source file."""
    with _lock:
        kept = []
        for r in _records:
            if r.path is None:
                r.path = path
            same = next((k for k in kept if (k.span, k.backend, k.path) == (r.span, r.backend, r.path)), None)
            if same is None:
                kept.append(r)
            else:
                same.count += r.count
                same.total += r.total
        _records[:] = kept


def take() -> list:
    """The records since the last ``take`` (or ``clear``), and forget them."""
    with _lock:
        out = list(_records)
        _records.clear()
        return out


def clear() -> None:
    with _lock:
        _records.clear()


def message(t: Ties) -> str:
    share = f"{t.count} of {t.total}" if t.total else str(t.count)
    what = "this cast" if t.backend == "interp" else "a rounding cast of this launch"
    return (f"{what} rounded {share} values lying within {ULPS} fp32 steps of a tie between two integers "
            f"(the first {t.value:.9g}, rounded to {t.rounded:g}); a golden whose fp32 sums ran in another order "
            "can round them to the other integer, and every result computed from them then differs")


def diagnostics(records: list) -> list:
    """One PTO114 warning per located record, at the cast's span (the kernel's first rounding cast on host)."""
    from .frontend.errors import CODES

    out = []
    for t in records:
        if t.span is None or t.path is None:
            continue
        out.append(Diagnostic(CODE, CODES[CODE].name, message(t), _as_span(t.path, t.span), Severity.WARNING,
                              help="compare the integers with a tolerance of one step, or the values computed from "
                                   "them at the share of rows one step moves; or draw inputs away from ties"))
    return out


def _as_span(path: str, span) -> Span:
    """A diagnostic span from an ir.Span (or its (line, col, end line, end col) tuple) in ``path``."""
    line, col, end_line, end_col = (span.line, span.col, span.end_line, span.end_col) if hasattr(span, "line") else span
    return Span(path, Pos(line, col), Pos(end_line, end_col))


def render(records: list) -> str:
    """The diagnostics with their source lines and carets, as pypto-transpile prints findings."""
    import linecache
    import os

    from .render import render_full

    parts = []
    for d in diagnostics(records):
        source = "".join(linecache.getlines(os.path.abspath(d.span.path))) or None
        parts.append(render_full(d, source))
    return "\n".join(parts)


_INTEGERS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64")


def rounding_casts(program) -> list:
    """The spans of ``program``'s casts that round a value to an integer dtype to nearest
    (``CAST_RINT``/``CAST_ROUND``), in program order: where a host launch's ties come from."""
    from . import ir

    spans = []
    for block in ir.blocks(program):
        for op in block.ops:
            if op.opcode != "cast" or op.span is None or not op.types:
                continue
            mode = str(op.attr("mode", "") or "").rsplit(".", 1)[-1].upper()
            if mode in ("CAST_RINT", "CAST_ROUND") and getattr(op.types[0], "dtype", None) in _INTEGERS:
                spans.append(op.span)
    return list(dict.fromkeys(spans))


def note_host_launch(lib, casts: list) -> None:
    """After a host launch: the ties the runtime's casts counted (``pypto_host_rounding_ties``)."""
    import ctypes

    read = getattr(lib, "pypto_host_rounding_ties", None)
    if read is None:
        return
    first = (ctypes.c_double * 2)()
    read.restype = ctypes.c_uint64
    count = int(read(first))
    if count and casts:
        record(Ties(casts[0], count, 0, float(first[0]), float(first[1]), "host"))
