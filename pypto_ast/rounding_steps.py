"""PTO113: a failed comparison whose every mismatch is one rounding step of a 16-bit float.

A test written for the NPU compares a kernel's bf16 (or fp16) output with a torch golden at a
tolerance finer than one bf16 step (``rtol=atol=3e-3``: one step at |x| in [2, 4) is 2^-6).  An
element whose exact value lies near a rounding midpoint then rounds to one neighbour on one
machine and to the other on another, because two fp32 sums in different orders differ in their
last bits: the kernel's K-blocked accumulation, the golden's CPU GEMM, the NPU's cube all sum
differently.  When a drop-in run fails such a comparison, this module says so at the line of the
comparison, with the element and the two neighbours, so that the user can tell it from a wrong
result (more than one step, or a value off the 16-bit grid).

Only the comparisons whose arguments can be read are explained: ``numpy.testing.assert_allclose``
and ``torch.testing.assert_close``, found on the failing traceback.  Nothing is changed: the test
still fails; the diagnostic is added to what the user sees (docs/design.md, "Rounding steps").
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass
from typing import Optional

from .diagnostics import Diagnostic, Pos, Severity, Span

CODE = "PTO113"
# (the function on the traceback, the names of its actual / expected / rtol / atol locals, default tolerances)
_COMPARISONS = {
    ("numpy", "assert_allclose"): ("actual", "desired", "rtol", "atol"),
    ("torch", "assert_close"): ("actual", "expected", "rtol", "atol"),
}


@dataclass(frozen=True)
class Steps:
    """What a one-step mismatch looks like: ``count`` of ``total`` elements off by one step of
    ``fmt``; the first at ``index``, ``actual`` against ``expected``, ``step`` apart, where the
    tolerance allowed ``allowed``."""

    fmt: str
    count: int
    total: int
    index: tuple
    actual: float
    expected: float
    step: float
    allowed: float


def one_step(actual, expected, rtol: float, atol: float, fmt: Optional[str] = None) -> Optional[Steps]:
    """``Steps`` when every element outside ``atol + rtol * |expected|`` (numpy's rule) is one step
    of bf16 or fp16 away from its expected value and both arrays lie on that format's grid
    (``fmt`` when the dtype says it); None otherwise (a NaN or inf among them, a larger error, values
    off the grid, shapes that differ)."""
    import numpy as np

    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape or a.size == 0:
        return None
    allowed = atol + rtol * np.abs(e)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(a - e) <= allowed)
    if not bad.any():
        return None
    av, ev = a[bad], e[bad]
    if not (np.isfinite(av).all() and np.isfinite(ev).all()):
        return None
    for name in ((fmt,) if fmt else ("bf16", "fp16")):
        if not (_on_grid(a, name) and _on_grid(e, name)):
            continue
        if (np.abs(_ordinal(av, name) - _ordinal(ev, name)) == 1).all():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            x, y = float(a[first]), float(e[first])
            return Steps(name, int(bad.sum()), int(a.size), first, x, y, abs(x - y), float(allowed[first]))
    return None


def _on_grid(x, fmt: str) -> bool:
    import numpy as np

    finite = x[np.isfinite(x)]
    if fmt == "fp16":
        return bool((finite.astype(np.float16).astype(np.float64) == finite).all())
    as32 = finite.astype(np.float32)
    return bool((as32.astype(np.float64) == finite).all() and not (as32.view(np.uint32) & 0xFFFF).any())


def _ordinal(x, fmt: str):
    """Each value's position on the format's grid, counted outward from zero with its sign
    (neighbouring values differ by 1, +0 and -0 share 0)."""
    import numpy as np

    if fmt == "fp16":
        bits = x.astype(np.float16).view(np.uint16).astype(np.int64)
        mag, sign = bits & 0x7FFF, bits >> 15
    else:
        bits = x.astype(np.float32).view(np.uint32).astype(np.int64) >> 16
        mag, sign = bits & 0x7FFF, bits >> 15
    return np.where(sign == 1, -mag, mag)


def _format_of(value) -> Optional[str]:
    name = str(getattr(value, "dtype", ""))
    return {"torch.bfloat16": "bf16", "torch.float16": "fp16", "float16": "fp16"}.get(name)


def _as_array(value):
    """A numpy view of a comparison's argument: torch tensors widened to fp32 (exact from 16 bits)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        return value.float().numpy() if value.is_floating_point() else value.numpy()
    return value


def explain(exc: BaseException) -> Optional[Diagnostic]:
    """PTO113 at the caller of the failing comparison on ``exc``'s traceback, or None."""
    if not isinstance(exc, AssertionError):
        return None
    tb, caller = exc.__traceback__, None
    while tb is not None:
        frame = tb.tb_frame
        key = (frame.f_globals.get("__name__", "").split(".")[0], frame.f_code.co_name)
        names = _COMPARISONS.get(key)
        if names is not None and caller is not None:
            return _diagnostic(frame.f_locals, names, caller)
        caller = tb
        tb = tb.tb_next
    return None


def _diagnostic(local: dict, names: tuple, caller) -> Optional[Diagnostic]:
    actual, expected, rtol, atol = (local.get(n) for n in names)
    if actual is None or expected is None:
        return None
    fmt = _format_of(actual) or _format_of(expected)
    if rtol is None or atol is None:  # torch's defaults for the dtype
        rtol, atol = {"bf16": (1.6e-2, 1e-5), "fp16": (1e-3, 1e-5)}.get(fmt, (1.3e-6, 1e-5))
    try:
        steps = one_step(_as_array(actual), _as_array(expected), float(rtol), float(atol), fmt)
    except (TypeError, ValueError):
        return None
    if steps is None:
        return None
    from .frontend.errors import CODES

    return Diagnostic(CODE, CODES[CODE].name, message(steps), _span(caller), Severity.WARNING,
                      help="a value at a rounding midpoint: compare at one step of the output format "
                           f"(for {steps.fmt}, rtol={2 ** -(7 if steps.fmt == 'bf16' else 10):g}) or in fp32")


def message(s: Steps) -> str:
    where = ", ".join(str(i) for i in s.index)
    return (f"every element outside the tolerance ({s.count} of {s.total}) is one {s.fmt} rounding step from the "
            f"expected value: at [{where}] {s.actual:.9g} against {s.expected:.9g}, one step ({s.step:.9g}) where "
            f"the tolerance allows {s.allowed:.3g}; fp32 sums in another order round a value near a midpoint to "
            "the other neighbour")


def _span(tb) -> Span:
    code = tb.tb_frame.f_code
    line, col = tb.tb_lineno, 0
    positions = list(code.co_positions())  # the call's column in this frame
    index = tb.tb_lasti // 2
    if 0 <= index < len(positions) and positions[index][0] is not None:
        line, col = positions[index][0], positions[index][2] or 0
        end_line, end_col = positions[index][1] or line, positions[index][3] or col + 1
    else:
        end_line, end_col = line, col + 1
    path = code.co_filename
    try:  # relative to the working directory when inside it, as pypto-lint names files
        rel = os.path.relpath(path)
        path = path if rel.startswith("..") else rel
    except ValueError:
        pass
    return Span(path, Pos(line, col), Pos(end_line, end_col))


def render(diag: Diagnostic) -> str:
    """The diagnostic with its source line and caret, as pypto-transpile prints findings."""
    from .render import render_full

    source = "".join(linecache.getlines(os.path.abspath(diag.span.path))) or None
    return render_full(diag, source)
